"""An agent (not an administrator) adds a canned response on the Canned responses page and inserts it with `/` in a
conversation, at a phone's and a laptop's width; nothing scrolls sideways.

Clicks: add a canned response = 2 (Canned responses, Add; the two fields typed); before: impossible for an agent
(administrators only, in the Django admin or the API)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from helpdesk.models import CannedResponse, Conversation, Membership
from tests.factories import (
    AccountFactory,
    ContactInboxFactory,
    ConversationFactory,
    InboxFactory,
    MembershipFactory,
    UserFactory,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = {"phone": (375, 740), "laptop": (1366, 768)}


@pytest.mark.parametrize("device", list(WIDTHS))
def test_an_agent_adds_a_canned_response_and_uses_it(browser, sign_in, live_server, redis_url, device):
    account = AccountFactory(name="Acme")
    inbox = InboxFactory(account=account)
    MembershipFactory(account=account, user=UserFactory(username="bob"), role=Membership.Role.AGENT)
    conversation = ConversationFactory(
        contact_inbox=ContactInboxFactory(inbox=inbox, contact__name="Dana"), status=Conversation.Status.OPEN
    )
    page = browser.page
    width, height = WIDTHS[device]
    page.set_viewport_size({"width": width, "height": height})
    sign_in(page, live_server.url, "bob", wait_for="**/lists/**")

    page.click("nav.admin-links a:has-text('Canned responses')")
    page.fill("#canned-new-code", "late")
    page.fill("#canned-new-content", "Sorry for the wait, {{contact.name}}.")
    page.click("form[data-canned-new] button")
    expect(page.locator(".flash li.success")).to_contain_text("Added /late.")
    expect(page.locator("li[data-canned]")).to_have_count(1)
    assert page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth") <= 0
    browser.shot(f"{device}-canned")
    assert CannedResponse.objects.get(account=account).short_code == "late"

    page.goto(f"{live_server.url}/app/accounts/{account.id}/conversations/{conversation.id}/")
    box = page.locator("#composer-text")
    box.click()
    box.press_sequentially("/lat")
    expect(page.locator("#canned-picker li.active")).to_contain_text("/late")
    page.keyboard.press("Enter")
    expect(box).to_have_value("Sorry for the wait, Dana.")
    assert browser.console_errors == []
