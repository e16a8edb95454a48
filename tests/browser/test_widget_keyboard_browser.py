"""The website widget in chromium on the demo's shop page (another loopback origin, its own strict CSP), the helpdesk
served by pytest-django's live server: used with the keyboard alone (Tab to the chat button, Enter opens it with
the focus in the message field, Enter sends, Tab and Enter on a suggestion the AI offered sends its text, Escape
closes and gives the focus back to the chat button), the thread a polite live region for screen readers, the
satisfaction survey as five labelled star buttons whose tap is stored as the rating, and all of it in Chinese
with `data-locale="zh"`. At a phone's width (375 px)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import transaction
from playwright.sync_api import expect

from helpdesk.management.commands.helpdesk_widget_page import DemoPage
from helpdesk.models import Conversation, CsatResponse, Inbox, Message
from helpdesk.services.csat import csat_request_after_resolution
from helpdesk.services.messages import message_create_ai_reply
from tests.browser.conftest import Browser
from tests.factories import InboxFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SUGGESTIONS = ["Track my parcel", "Talk to a person"]


@pytest.fixture
def inbox() -> Inbox:
    return InboxFactory(channel_type=Inbox.ChannelType.WIDGET, callback_url="", csat_survey_enabled=True)


def shop_for(inbox: Inbox, live_server, locale: str = "") -> DemoPage:
    shop = DemoPage(helpdesk=live_server.url, website_token=inbox.webhook_token, locale=locale).start()
    inbox.provider_config = {"allowed_origins": shop.origin}
    inbox.save(update_fields=["provider_config"])
    return shop


@pytest.fixture
def shop(inbox, live_server) -> Iterator[DemoPage]:
    page = shop_for(inbox, live_server)
    yield page
    page.stop()


def ai_reply(conversation: Conversation, text: str, suggestions: list[str]) -> None:
    with transaction.atomic():
        reply = message_create_ai_reply(
            conversation=conversation, content=text, agent_key="triage", agent_name="Ava"
        )
        Message.objects.filter(pk=reply.pk).update(quick_replies=suggestions)


def test_the_widget_is_used_with_the_keyboard_alone(browser: Browser, inbox, shop):
    page = browser.page
    page.set_viewport_size({"width": 375, "height": 740})
    page.goto(shop.origin + "/")

    page.keyboard.press("Tab")
    bubble = page.get_by_role("button", name="Open chat")
    expect(bubble).to_be_focused()
    page.keyboard.press("Enter")
    message = page.get_by_label("Your message")
    expect(message).to_be_focused()
    expect(page.locator("[data-helpdesk-widget]")).to_have_attribute("data-widget-state", "ready")
    page.keyboard.type("Where is my parcel?")
    page.keyboard.press("Enter")
    expect(page.locator("[data-widget-message=visitor] [data-widget-text]")).to_have_text(
        ["Where is my parcel?"]
    )

    conversation = Message.objects.get(content="Where is my parcel?").conversation
    ai_reply(conversation, "I can help with that.", SUGGESTIONS)
    page.reload()
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    reply = page.locator("[data-widget-message=reply]")
    expect(reply.locator("[data-widget-sender]")).to_have_text("Ava")
    expect(reply.locator("[data-widget-suggestion]")).to_have_text(SUGGESTIONS)
    # For screen readers: the thread is a polite live region, so a new message is read out as it arrives.
    log = page.locator("[data-widget-log]")
    expect(log).to_have_attribute("role", "log")
    expect(log).to_have_attribute("aria-live", "polite")
    browser.shot("suggestions-phone")

    page.get_by_role("button", name="Track my parcel").focus()
    page.keyboard.press("Enter")
    expect(page.locator("[data-widget-message=visitor] [data-widget-text]")).to_have_text(
        ["Where is my parcel?", "Track my parcel"]
    )
    assert Message.objects.filter(conversation=conversation, message_type=Message.Type.INCOMING).count() == 2

    message.focus()
    page.keyboard.press("Escape")
    expect(page.locator("[data-widget-panel]")).to_be_hidden()
    expect(bubble).to_be_focused()
    expect(bubble).to_have_attribute("aria-expanded", "false")
    assert browser.console_errors == []


def test_the_satisfaction_survey_is_five_stars_and_a_tap_is_the_rating(browser: Browser, inbox, shop):
    page = browser.page
    page.set_viewport_size({"width": 375, "height": 740})
    page.goto(shop.origin + "/")
    page.get_by_role("button", name="Open chat").click()
    page.get_by_label("Your message").fill("Thanks, all sorted")
    page.get_by_label("Your message").press("Enter")
    expect(page.locator("[data-widget-message=visitor]")).to_have_count(1)
    conversation = Message.objects.get(content="Thanks, all sorted").conversation
    Conversation.objects.filter(pk=conversation.pk).update(status=Conversation.Status.RESOLVED)
    assert csat_request_after_resolution(conversation_id=conversation.pk) is not None

    page.reload()
    page.get_by_role("button", name="Open chat").click()
    stars = page.locator("[data-widget-message=reply] [data-widget-suggestion]")
    expect(stars).to_have_text(["★", "★★", "★★★", "★★★★", "★★★★★"])
    browser.shot("survey-stars-phone")
    page.get_by_role("button", name="5 of 5 stars").click()

    expect(page.locator("[data-widget-message=visitor] [data-widget-text]")).to_have_count(2)
    rating = CsatResponse.objects.get(conversation=conversation)
    assert rating.rating == 5
    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.RESOLVED  # a rating does not reopen it
    assert browser.console_errors == []


def test_the_widget_speaks_chinese_with_data_locale_zh(browser: Browser, inbox, live_server):
    shop = shop_for(inbox, live_server, locale="zh")
    try:
        page = browser.page
        page.set_viewport_size({"width": 375, "height": 740})
        page.goto(shop.origin + "/")
        page.get_by_role("button", name="打开聊天").click()
        expect(page.locator("[data-helpdesk-widget]")).to_have_attribute("lang", "zh")
        page.get_by_label("您的消息").fill("我的包裹在哪里？")
        page.get_by_role("button", name="发送").click()
        expect(page.locator("[data-widget-message=visitor] [data-widget-sender]")).to_have_text(["您"])
        expect(page.get_by_role("button", name="添加文件（图片或音频）")).to_be_visible()

        conversation = Message.objects.get(content="我的包裹在哪里？").conversation
        Conversation.objects.filter(pk=conversation.pk).update(status=Conversation.Status.RESOLVED)
        csat_request_after_resolution(conversation_id=conversation.pk)
        page.reload()
        page.get_by_role("button", name="打开聊天").click()
        expect(page.get_by_role("button", name="5 星（共 5 星）")).to_be_visible()
        browser.shot("chinese-phone")
        page.get_by_role("button", name="关闭聊天").click()
        expect(page.get_by_role("button", name="打开聊天")).to_be_focused()
        assert browser.console_errors == []
    finally:
        shop.stop()
