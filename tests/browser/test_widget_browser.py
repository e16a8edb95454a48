"""The website chat widget on a third-party page, in chromium, with every part real: the page is served from its
own loopback origin with a strict Content-Security-Policy (scripts and connections only from the helpdesk, no
inline script or style); the helpdesk is the real web server (gunicorn + uvicorn, ASGI) with a real
redis-server; a real Celery worker answers through the normal AI pipeline with the scripted model server.

The visitor opens the widget, writes, sees the AI typing and gets its reply live (no reload), reloads and continues the same
conversation; a forged `identifier_hash` is refused and a valid one identifies them; the same page on an origin
the inbox does not allow gets no chat at all."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from helpdesk.channels.widget import identifier_hash
from helpdesk.management.commands.helpdesk_widget_page import DemoPage
from helpdesk.models import ContactInbox, Inbox, Message
from tests.browser.conftest import Browser
from tests.factories import AssistantInboxFactory, InboxFactory
from tests.support import fake_llm_server as fake
from tests.support.database import database_url_for_subprocess
from tests.support.servers import start_celery_worker, start_test_web_server

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SECRET = "widget-browser-secret"
REPLY = "Thanks for writing, we are on it."


def scripted_model(request: dict) -> fake.Step:
    # Slow enough that the visitor sees the AI typing before the reply arrives.
    return fake.delay(2.5, fake.text(REPLY))


@pytest.fixture
def stack(redis_url, tmp_path: Path) -> Iterator[dict]:
    with fake.FakeLLMServer(responder=scripted_model) as model:
        worker = start_celery_worker(
            env={
                "DATABASE_URL": database_url_for_subprocess(),
                "REDIS_URL": redis_url,
                "OPENAI_BASE_URL": model.base_url,
                "OPENAI_API_KEY": "test",
                "CAPTAIN_LLM_TIMEOUT": "5",
                "CAPTAIN_LLM_MAX_RETRIES": "0",
                "CAPTAIN_DEBOUNCE_SECONDS": "0",
            },
            log_path=tmp_path / "worker.log",
        )
        server = start_test_web_server(redis_url=redis_url, tmp_path=tmp_path)
        inbox = InboxFactory(channel_type=Inbox.ChannelType.WIDGET, secret=SECRET, callback_url="")
        AssistantInboxFactory(inbox=inbox, assistant__account=inbox.account)
        # The demo's shop page (helpdesk_widget_page), twice: one origin allowed, the other not.
        shop = DemoPage(helpdesk=server.url, website_token=inbox.webhook_token).start()
        elsewhere = DemoPage(helpdesk=server.url, website_token=inbox.webhook_token).start()
        inbox.provider_config = {"allowed_origins": shop.origin}
        inbox.save(update_fields=["provider_config"])
        try:
            yield {"server": server, "worker": worker, "inbox": inbox, "shop": shop, "elsewhere": elsewhere}
        finally:
            # Shown with a failure (pytest prints a test's captured output): where the reply's time went.
            print("---- celery worker log (end) ----\n" + worker.log()[-6000:])
            print("---- web server log (end) ----\n" + server.log()[-4000:])
            shop.stop()
            elsewhere.stop()
            server.stop()
            worker.stop()


def open_widget(page) -> None:
    page.get_by_role("button", name="Open chat").click()
    expect(page.locator("[data-helpdesk-widget]")).to_have_attribute("data-widget-state", "ready")
    expect(page.get_by_label("Your message")).to_be_focused()


def say(page, text: str) -> None:
    page.get_by_label("Your message").fill(text)
    page.get_by_label("Your message").press("Enter")


def test_a_visitor_talks_to_the_ai_team_on_a_third_party_page_with_a_strict_csp(browser: Browser, stack):
    page, shop, inbox = browser.page, stack["shop"], stack["inbox"]
    page.goto(shop.origin + "/")
    open_widget(page)
    page.evaluate("window.__notReloaded = true")

    say(page, "Where is my parcel?")

    replies = page.locator("[data-widget-message=reply]")
    expect(page.locator("[data-widget-message=visitor]")).to_have_text(["YouWhere is my parcel?"])
    expect(page.locator("[data-widget-typing]")).to_be_visible(timeout=60_000)  # the AI is composing
    browser.shot("ai-typing")
    expect(replies.first.locator("[data-widget-text]")).to_have_text(REPLY, timeout=60_000)
    expect(page.locator("[data-widget-typing]")).to_be_hidden()
    assert replies.first.locator("[data-widget-sender]").inner_text().strip() != ""
    assert page.evaluate("window.__notReloaded === true")  # it came live, the page was never reloaded
    browser.shot("ai-reply-live")
    assert Message.objects.filter(inbox=inbox, message_type=Message.Type.OUTGOING, content=REPLY).count() == 1

    page.reload()
    open_widget(page)
    expect(page.locator("[data-widget-text]")).to_have_text(["Where is my parcel?", REPLY])
    say(page, "And can I change the address?")
    expect(replies).to_have_count(2, timeout=60_000)
    assert ContactInbox.objects.filter(inbox=inbox).count() == 1
    assert Message.objects.filter(inbox=inbox).values("conversation").distinct().count() == 1
    browser.shot("continued-after-reload")

    forged = page.evaluate(
        "window.HelpdeskWidget.setUser('cust-42', {name: 'Mallory', identifier_hash: '0'.repeat(64)})"
        ".then(() => 'accepted', (error) => error.code)"
    )
    assert forged == "identifier_hash_invalid"
    (anonymous,) = ContactInbox.objects.filter(inbox=inbox).values_list("source_id", flat=True)
    assert anonymous.startswith("visitor:")

    proof = identifier_hash(SECRET, "cust-42")
    accepted = page.evaluate(
        f"window.HelpdeskWidget.setUser('cust-42', {{name: 'Ann', identifier_hash: '{proof}'}}).then(r => r.ok)"
    )
    assert accepted is True
    row = ContactInbox.objects.get(inbox=inbox)
    assert (row.source_id, row.contact.name) == ("user:cust-42", "Ann")
    expect(page.locator("[data-widget-text]")).to_have_count(4)
    # The one error the browser logs is the forged setUser's 403: no CSP violation, no other failure.
    assert browser.console_errors == [
        "Failed to load resource: the server responded with a status of 403 (Forbidden)"
    ]


def test_the_widget_is_refused_on_a_page_of_another_origin(browser: Browser, stack):
    page, elsewhere, inbox, server = browser.page, stack["elsewhere"], stack["inbox"], stack["server"]
    page.set_viewport_size({"width": 375, "height": 700})
    page.goto(elsewhere.origin + "/")

    page.get_by_role("button", name="Open chat").click()

    expect(page.locator("[data-helpdesk-widget]")).to_have_attribute("data-widget-state", "unavailable")
    expect(page.locator("[data-widget-status]")).to_have_text("The chat is not available on this page.")
    box = page.locator("[data-widget-panel]").bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 375  # fits a phone
    browser.shot("refused-origin-phone")
    assert ContactInbox.objects.filter(inbox=inbox).count() == 0
    # What the browser hid from the page (no CORS header), asked directly: a clear 403, not a 500.
    answer = httpx.post(
        f"{server.url}/widget/{inbox.webhook_token}/session/",
        headers={"Origin": elsewhere.origin},
        timeout=10,
    )
    assert (answer.status_code, answer.json()["error"]) == (403, "origin_not_allowed")
    assert "access-control-allow-origin" not in answer.headers


def test_the_pre_chat_form_asks_name_and_email_before_the_first_message(browser: Browser, stack):
    page, shop, inbox = browser.page, stack["shop"], stack["inbox"]
    inbox.provider_config = {**inbox.provider_config, "prechat_fields": "name email"}
    inbox.save(update_fields=["provider_config"])
    page.set_viewport_size({"width": 375, "height": 700})
    page.goto(shop.origin + "/")
    page.get_by_role("button", name="Open chat").click()

    expect(page.get_by_label("Your name")).to_be_focused()
    expect(page.locator("[data-widget-form]")).to_be_hidden()
    page.get_by_label("Your name").fill("Ann")
    page.get_by_label("Your e-mail").fill("ann@example.com")
    page.get_by_role("button", name="Start chat").click()

    expect(page.get_by_label("Your message")).to_be_focused()
    browser.shot("after-pre-chat-phone")
    say(page, "Hello")
    expect(page.locator("[data-widget-message=reply] [data-widget-text]")).to_have_text(
        [REPLY], timeout=60_000
    )
    contact = ContactInbox.objects.get(inbox=inbox).contact
    assert (contact.name, contact.email) == ("Ann", "ann@example.com")
    page.reload()
    page.get_by_role("button", name="Open chat").click()
    expect(page.get_by_label("Your message")).to_be_visible()  # asked once
    expect(page.locator("[data-widget-prechat]")).to_be_hidden()


def test_a_reply_reaches_the_visitor_when_reading_the_messages_fails_for_a_while(browser: Browser, stack):
    """The stream tells the page once that a message exists; a reading that fails then (the helpdesk busy or
    restarting) is tried again, so the reply still shows, and a new conversation is still followed live."""
    page, shop, inbox = browser.page, stack["shop"], stack["inbox"]
    page.goto(shop.origin + "/")
    open_widget(page)
    failed: list[str] = []

    def flaky_reads(route) -> None:
        # The first three readings after the visitor writes fail as a dropped connection would.
        if route.request.method == "GET" and len(failed) < 3:
            failed.append(route.request.url)
            route.abort("connectionreset")
        else:
            route.continue_()

    page.route("**/messages/?after=*", flaky_reads)
    say(page, "Where is my parcel?")

    expect(page.locator("[data-widget-message=reply] [data-widget-text]")).to_have_text(
        [REPLY], timeout=60_000
    )
    assert len(failed) == 3
    expect(page.locator("[data-widget-status]")).to_have_text("")  # the message was sent: no error shown
    assert Message.objects.filter(inbox=inbox, message_type=Message.Type.OUTGOING).count() == 1


def test_a_refused_live_stream_is_opened_again_and_the_reply_still_comes(browser: Browser, stack):
    """The helpdesk refuses a visitor's stream when it cannot subscribe in time (503: EventSource then gives up for
    good); the widget opens it again later, so the reply still comes live, well before any fallback reading."""
    page, shop = browser.page, stack["shop"]
    refused: list[str] = []

    def busy_streams(route) -> None:
        # The first two streams (the one opened with the chat, the one following the new conversation) refused.
        if len(refused) < 2:
            refused.append(route.request.url)
            route.fulfill(status=503, content_type="text/plain", body="Live updates are unavailable.")
        else:
            route.continue_()

    page.route("**/events/?visitor_token=*", busy_streams)
    page.goto(shop.origin + "/")
    open_widget(page)
    say(page, "Where is my parcel?")

    # Under the 60 s after which the page reads again whatever happened to the stream.
    expect(page.locator("[data-widget-message=reply] [data-widget-text]")).to_have_text(
        [REPLY], timeout=30_000
    )
    assert len(refused) == 2
