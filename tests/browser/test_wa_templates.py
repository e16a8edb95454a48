"""A WhatsApp conversation whose 24-hour window is closed, in a real browser (Debian's chromium through
Playwright): the composer says the window is closed, the agent opens a template, fills its variable (the preview
follows the typing), sends it (at a phone's and a laptop's width, no sideways scroll), and the filled reply appears in the thread."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from helpdesk.models import Inbox, Membership, Message, WhatsAppTemplate
from tests.factories import (
    AccountFactory,
    ContactInboxFactory,
    ConversationFactory,
    InboxFactory,
    MembershipFactory,
    MessageFactory,
    UserFactory,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def desk(redis_url):
    """An agent and a WhatsApp conversation whose customer last wrote two days ago."""
    account = AccountFactory(name="Acme")
    inbox = InboxFactory(account=account, name="WhatsApp", channel_type=Inbox.ChannelType.WHATSAPP)
    WhatsAppTemplate.objects.create(
        inbox=inbox, name="follow_up", language="en_US", body="Hi, still waiting on {{1}}?"
    )
    agent = UserFactory(username="bob", first_name="Bob")
    MembershipFactory(account=account, user=agent, role=Membership.Role.AGENT)
    link = ContactInboxFactory(inbox=inbox, contact__name="Dana", source_id="16505551234")
    conversation = ConversationFactory(contact_inbox=link, status="open")
    message = MessageFactory(conversation=conversation, content="Where is my parcel?")
    Message.objects.filter(pk=message.pk).update(created_at=timezone.now() - timedelta(days=2))
    return {"account": account, "conversation": conversation}


WIDTHS = {"phone": (375, 740), "laptop": (1366, 768)}


@pytest.mark.parametrize("device", list(WIDTHS))
def test_closed_window_template_picked_filled_and_sent(browser, sign_in, live_server, desk, device):
    page = browser.page
    width, height = WIDTHS[device]
    page.set_viewport_size({"width": width, "height": height})
    sign_in(page, live_server.url, "bob", wait_for="**/lists/**")
    page.goto(f"{live_server.url}/app/accounts/{desk['account'].id}/conversations/{desk['conversation'].id}/")
    section = page.locator("#wa-templates")
    expect(section).to_contain_text("WhatsApp window closed")
    page.get_by_text("follow_up").click()
    value = page.get_by_label("Value 1")
    expect(value).to_be_visible()
    value.fill("the refund for order 42")
    expect(section.locator(".wa-preview")).to_have_text("Hi, still waiting on the refund for order 42?")
    assert (
        page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth") <= 0
    )  # no sideways scroll
    browser.shot(f"{device}-wa-template-filled")
    page.get_by_role("button", name="Send template").click()
    expect(page.locator(".flash li.success")).to_contain_text("Template queued for delivery.")
    expect(page.locator("li.msg.human").last).to_contain_text("Hi, still waiting on the refund for order 42?")
    reply = Message.objects.get(conversation=desk["conversation"], message_type=Message.Type.OUTGOING)
    assert reply.whatsapp_template_send.values == ["the refund for order 42"]
