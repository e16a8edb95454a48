"""The widget's events for the page it is on, in chromium on the demo's shop page (another loopback origin, its own
strict CSP; the helpdesk served by pytest-django's live server): `helpdesk:ready` once the chat starts,
`helpdesk:message` for each new message (the visitor's and the replies, not the history read at the start), and
`helpdesk:error` when the chat is unavailable on the page."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from helpdesk.management.commands.helpdesk_widget_page import DemoPage
from helpdesk.models import Inbox, Message
from helpdesk.services.messages import message_create_agent_reply
from tests.browser.conftest import Browser
from tests.factories import InboxFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RECORD = """() => {
  window.__events = [];
  for (const name of ["ready", "message", "error"]) {
    window.addEventListener("helpdesk:" + name, (event) => window.__events.push([name, event.detail]));
  }
}"""


def events(page) -> list:
    return page.evaluate("window.__events")


def test_the_page_hears_ready_each_new_message_and_errors(browser: Browser, live_server):
    inbox = InboxFactory(channel_type=Inbox.ChannelType.WIDGET, callback_url="")
    shop = DemoPage(helpdesk=live_server.url, website_token=inbox.webhook_token).start()
    elsewhere = DemoPage(helpdesk=live_server.url, website_token=inbox.webhook_token).start()
    inbox.provider_config = {"allowed_origins": shop.origin}
    inbox.save(update_fields=["provider_config"])
    try:
        page = browser.page
        page.goto(shop.origin + "/")
        page.evaluate(RECORD)
        page.get_by_role("button", name="Open chat").click()
        expect(page.locator("[data-helpdesk-widget]")).to_have_attribute("data-widget-state", "ready")
        page.get_by_label("Your message").fill("Hello")
        page.get_by_label("Your message").press("Enter")
        expect(page.locator("[data-widget-message=visitor]")).to_have_count(1)
        conversation = Message.objects.get(content="Hello").conversation
        agent = UserFactory(first_name="Sam", last_name="Lee")
        message_create_agent_reply(conversation=conversation, user=agent, content="Hi, how can I help?")
        page.get_by_label("Your message").fill("Is anyone there?")
        page.get_by_label("Your message").press("Enter")  # the thread is read again: the reply comes with it
        expect(page.locator("[data-widget-message]")).to_have_count(3)

        seen = events(page)
        assert seen[0] == ["ready", {"away": False}]
        assert [(name, d["incoming"], d["text"], d["sender_name"]) for name, d in seen[1:]] == [
            ("message", True, "Hello", ""),
            ("message", False, "Hi, how can I help?", "Sam Lee"),
            ("message", True, "Is anyone there?", ""),
        ]

        page.reload()  # the thread read at the start is history, not news
        page.evaluate(RECORD)
        page.get_by_role("button", name="Open chat").click()
        expect(page.locator("[data-widget-message]")).to_have_count(3)
        assert events(page) == [["ready", {"away": False}]]

        page.goto(elsewhere.origin + "/")
        page.evaluate(RECORD)
        page.get_by_role("button", name="Open chat").click()
        expect(page.locator("[data-helpdesk-widget]")).to_have_attribute("data-widget-state", "unavailable")
        # The helpdesk's refusal carries no CORS header: the page learns the chat is unavailable, nothing more.
        assert events(page) == [["error", {"code": "unavailable"}]]
    finally:
        shop.stop()
        elsewhere.stop()
