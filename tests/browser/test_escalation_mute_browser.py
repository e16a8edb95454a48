"""The per-person escalation setting in a real browser at a phone's and a laptop's width: an administrator mutes
escalations from the bell's menu, a new escalation then does not reach their bell, and they turn it back on.

Clicks: mute escalations = 2 (the bell, "Mute escalations"); before: impossible (only e-mail could be turned off,
and every escalation without a team reached everyone in the account)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from helpdesk.models import Conversation, Membership, Notification
from helpdesk.services.conversations import conversation_escalate
from tests.factories import AccountFactory, ConversationFactory, InboxFactory, MembershipFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = {"phone": (375, 740), "laptop": (1366, 768)}


@pytest.mark.parametrize("device", list(WIDTHS))
def test_an_admin_mutes_escalations_from_the_bell(browser, sign_in, live_server, redis_url, device):
    account = AccountFactory(name="Acme")
    inbox = InboxFactory(account=account)
    admin = UserFactory(username="alice")
    MembershipFactory(account=account, user=admin, role=Membership.Role.ADMIN)
    page = browser.page
    width, height = WIDTHS[device]
    page.set_viewport_size({"width": width, "height": height})
    sign_in(page, live_server.url, "alice", wait_for="**/lists/**")

    page.click(".notif-bell summary")
    page.click("form[data-notif-escalations] button")
    page.wait_for_load_state()
    page.click(".notif-bell summary")
    expect(page.locator("form[data-notif-escalations] button")).to_have_text("Tell me about escalations")
    assert page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth") <= 0
    browser.shot(f"{device}-muted")

    conversation = ConversationFactory(contact_inbox__inbox=inbox, status=Conversation.Status.PENDING)
    conversation_escalate(conversation=conversation, reason="Refund", customer_message="")
    assert not Notification.objects.filter(user=admin).exists()

    page.click("form[data-notif-escalations] button")
    page.wait_for_load_state()
    page.click(".notif-bell summary")
    expect(page.locator("form[data-notif-escalations] button")).to_have_text("Mute escalations")
    conversation_escalate(
        conversation=ConversationFactory(contact_inbox__inbox=inbox, status=Conversation.Status.PENDING),
        reason="Refund",
        customer_message="",
    )
    assert Notification.objects.filter(user=admin, kind="escalation").count() == 1
    assert browser.console_errors == []
