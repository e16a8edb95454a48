"""The contacts pages in a real browser at a phone's and a laptop's width: search a contact, merge its duplicate
into it, edit it; nothing scrolls sideways. Screenshots go to test-output/screenshots/.

Clicks (as the test takes them): open a contact from anywhere = 2 (Contacts, the result; the search is typed and
sent with Enter), edit = 1 (Save), merge a suggested duplicate = 1."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from helpdesk.models import Contact, Conversation, Membership
from tests.factories import (
    AccountFactory,
    ContactFactory,
    ContactInboxFactory,
    ConversationFactory,
    InboxFactory,
    MembershipFactory,
    UserFactory,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = {"phone": (375, 740), "laptop": (1366, 768)}


@pytest.fixture
def customers(redis_url):
    """Ann twice (a chat and an e-mail contact of the same person) among other customers; one long e-mail."""
    account = AccountFactory(name="Acme")
    inbox = InboxFactory(account=account, name="Website chat")
    MembershipFactory(account=account, user=UserFactory(username="bob"), role=Membership.Role.AGENT)
    for n in range(8):
        ContactFactory(account=account, name=f"Customer {n}", email=f"customer-{n}-{'x' * 40}@example.test")
    kept = ContactFactory(account=account, name="Ann Lee", email="ann@shop.test")
    duplicate = ContactFactory(account=account, name="Ann Lee", email="")
    for contact in (kept, duplicate):
        ConversationFactory(contact_inbox=ContactInboxFactory(inbox=inbox, contact=contact))
    return {"account": account, "kept": kept, "duplicate": duplicate}


def horizontal_overflow(page) -> int:
    return page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth")


@pytest.mark.parametrize("device", list(WIDTHS))
def test_search_edit_and_merge_a_contact(browser, sign_in, live_server, customers, device):
    page = browser.page
    width, height = WIDTHS[device]
    page.set_viewport_size({"width": width, "height": height})
    sign_in(page, live_server.url, "bob", wait_for="**/lists/**")
    kept, duplicate = customers["kept"], customers["duplicate"]

    page.click("nav.admin-links a:has-text('Contacts')")
    expect(page.locator("tr[data-contact]")).to_have_count(10)
    assert horizontal_overflow(page) <= 0
    browser.shot(f"{device}-list")

    page.fill("#contact-q", "ann")
    page.press("#contact-q", "Enter")
    expect(page.locator("tr[data-contact]")).to_have_count(2)
    assert horizontal_overflow(page) <= 0
    page.locator(f'tr[data-contact="{kept.pk}"] a').click()
    expect(page.locator(".page-head h1")).to_contain_text("Ann Lee")

    # The other "Ann Lee" is offered as a duplicate (same name): one click merges it.
    page.locator(f'li[data-duplicate="{duplicate.pk}"] button').click()
    expect(page.locator(".flash li.success")).to_contain_text(f"Merged Ann Lee (#{duplicate.pk})")
    expect(page.locator("li[data-conversation]")).to_have_count(2)
    assert horizontal_overflow(page) <= 0
    browser.shot(f"{device}-merged")

    page.fill("#contact-name", "Ann Lee-Smith")
    page.fill("#contact-phone", "+44 20 7946 0000")
    page.click(".contact-form button[type=submit]")
    expect(page.locator(".flash li.success")).to_have_text("Contact saved.")
    expect(page.locator("#contact-phone")).to_have_value("+44 20 7946 0000")
    assert horizontal_overflow(page) <= 0
    browser.shot(f"{device}-edited")

    page.click("a:has-text('← Contacts')")
    page.fill("#contact-q", "7946")
    page.press("#contact-q", "Enter")
    expect(page.locator("tr[data-contact]")).to_have_count(1)
    expect(page.locator("tr[data-contact]")).to_contain_text("Ann Lee-Smith")

    assert not Contact.objects.filter(pk=duplicate.pk).exists()
    assert Conversation.objects.filter(contact=kept).count() == 2
    assert browser.console_errors == []
