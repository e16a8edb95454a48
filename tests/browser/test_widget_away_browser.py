"""The widget outside business hours, in chromium on the demo shop page (its own origin and strict CSP) against
the real web server: the away message is shown and the visitor is asked for their e-mail before writing, at
375 px; the e-mail is stored on the contact and the question is stored; inside business hours neither shows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from helpdesk.management.commands.helpdesk_widget_page import DemoPage
from helpdesk.models import ContactInbox, Inbox, Message
from tests.browser.conftest import Browser
from tests.factories import InboxFactory
from tests.helpdesk.channels_widget.test_business_hours import ALWAYS_OPEN, closed_now
from tests.support.servers import start_test_web_server

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def stack(redis_url, tmp_path: Path) -> Iterator[dict]:
    server = start_test_web_server(redis_url=redis_url, tmp_path=tmp_path)
    inbox = InboxFactory(channel_type=Inbox.ChannelType.WIDGET, callback_url="")
    shop = DemoPage(helpdesk=server.url, website_token=inbox.webhook_token).start()
    inbox.provider_config = {
        "allowed_origins": shop.origin,
        "business_hours": closed_now(),
        "away_message": "We are away until Monday 9:00.",
    }
    inbox.save(update_fields=["provider_config"])
    try:
        yield {"inbox": inbox, "shop": shop}
    finally:
        shop.stop()
        server.stop()


def test_away_hours_show_the_away_message_and_ask_for_the_e_mail(browser: Browser, stack):
    page, inbox = browser.page, stack["inbox"]
    page.set_viewport_size({"width": 375, "height": 700})
    page.goto(stack["shop"].origin + "/")
    page.get_by_role("button", name="Open chat").click()

    expect(page.locator("[data-widget-away]")).to_have_text("We are away until Monday 9:00.")
    expect(page.get_by_label("Your e-mail")).to_be_focused()
    expect(page.locator("[data-widget-form]")).to_be_hidden()
    browser.shot("away-phone")
    page.get_by_label("Your e-mail").fill("ann@example.com")
    page.get_by_role("button", name="Start chat").click()
    expect(page.get_by_label("Your message")).to_be_focused()
    page.get_by_label("Your message").fill("Do you ship to Norway?")
    page.get_by_label("Your message").press("Enter")
    expect(page.locator("[data-widget-message=visitor] [data-widget-text]")).to_have_text(
        ["Do you ship to Norway?"]
    )

    assert ContactInbox.objects.get(inbox=inbox).contact.email == "ann@example.com"
    assert Message.objects.filter(inbox=inbox, content="Do you ship to Norway?").count() == 1
    page.reload()
    page.get_by_role("button", name="Open chat").click()
    expect(page.locator("[data-widget-away]")).to_be_visible()
    expect(page.get_by_label("Your message")).to_be_visible()  # the e-mail is asked once
    expect(page.locator("[data-widget-prechat]")).to_be_hidden()


def test_inside_business_hours_there_is_no_away_message(browser: Browser, stack):
    page, inbox = browser.page, stack["inbox"]
    inbox.provider_config = {**inbox.provider_config, "business_hours": ALWAYS_OPEN}
    inbox.save(update_fields=["provider_config"])
    page.goto(stack["shop"].origin + "/")
    page.get_by_role("button", name="Open chat").click()
    expect(page.locator("[data-helpdesk-widget]")).to_have_attribute("data-widget-state", "ready")
    expect(page.get_by_label("Your message")).to_be_focused()
    expect(page.locator("[data-widget-away]")).to_be_hidden()
    expect(page.locator("[data-widget-prechat]")).to_be_hidden()
