"""A note on a contact in a real browser at a phone's and a laptop's width: written on the contact's page, shown
at the top of its notes with the author; nothing scrolls sideways.

Clicks: add a note about a customer = 1 (Add note, the text typed) from the contact's page; before: impossible."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from helpdesk.models import ContactNote, Membership
from tests.factories import AccountFactory, ContactFactory, MembershipFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = {"phone": (375, 740), "laptop": (1366, 768)}


@pytest.mark.parametrize("device", list(WIDTHS))
def test_a_note_on_a_contact(browser, sign_in, live_server, redis_url, device):
    account = AccountFactory(name="Acme")
    MembershipFactory(account=account, user=UserFactory(username="bob"), role=Membership.Role.AGENT)
    contact = ContactFactory(account=account, name="Ann Lee", phone="+1 555 0100")
    page = browser.page
    width, height = WIDTHS[device]
    page.set_viewport_size({"width": width, "height": height})
    sign_in(page, live_server.url, "bob", wait_for="**/lists/**")

    page.goto(f"{live_server.url}/app/accounts/{account.id}/contacts/{contact.id}/")
    expect(page.locator("#contact-phone")).to_have_value("+1 555 0100")
    page.fill("#contact-note", "Prefers a call after 17:00. " + "Very long words " * 20)
    page.click("form[data-contact-note] button")
    expect(page.locator(".flash li.success")).to_contain_text("Note added.")
    note = page.locator("li[data-contact-note-id]").first
    expect(note).to_contain_text("Prefers a call after 17:00.")
    expect(note).to_contain_text("bob")
    assert page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth") <= 0
    browser.shot(f"{device}-note")
    assert ContactNote.objects.get().contact_id == contact.id
    assert browser.console_errors == []
