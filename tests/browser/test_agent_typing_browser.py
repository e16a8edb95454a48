"""A person on the team writing a reply shows as "typing" in the customer's website chat, in chromium with every
part real: the customer's page is the demo shop on its own loopback origin with a strict Content-Security-Policy;
the helpdesk is the real web server (gunicorn + uvicorn, ASGI) with a real redis-server; the agent is signed in
to the dashboard in another tab of the same browser.

No AI answers in this inbox, so the only "typing" the visitor can see is the agent's: while the agent types a
private note nothing is sent (the page makes no typing request) and the chat shows nothing; once the agent
switches to "Reply to the customer" and types, the chat shows "Typing…", with the page's requests held to one
every few seconds however many keys are pressed."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from helpdesk.management.commands.helpdesk_widget_page import DemoPage
from helpdesk.models import Inbox, Membership, Message
from tests.browser.conftest import Browser
from tests.factories import InboxFactory, MembershipFactory, UserFactory
from tests.support.servers import start_test_web_server

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "pass-word-123"  # tests.factories.UserFactory's
NOTE = "VIP customer, ask Dana before promising anything."
REPLY = "Hello! Let me look at your order right away, it will only take a minute."


@pytest.fixture
def stack(redis_url, tmp_path: Path) -> Iterator[dict]:
    server = start_test_web_server(redis_url=redis_url, tmp_path=tmp_path)
    inbox = InboxFactory(channel_type=Inbox.ChannelType.WIDGET, callback_url="")
    agent = UserFactory(username="sam")
    MembershipFactory(account=inbox.account, user=agent, role=Membership.Role.AGENT)
    shop = DemoPage(helpdesk=server.url, website_token=inbox.webhook_token).start()
    inbox.provider_config = {"allowed_origins": shop.origin}
    inbox.save(update_fields=["provider_config"])
    try:
        yield {"server": server, "inbox": inbox, "shop": shop}
    finally:
        shop.stop()
        server.stop()


def wait_until(page, condition, *, seconds: float = 15.0) -> None:
    # page.wait_for_timeout, not time.sleep: Playwright's sync API delivers events only while it is called.
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        page.wait_for_timeout(100)


def test_the_visitor_sees_typing_while_an_agent_writes_a_reply_and_not_a_note(browser: Browser, stack):
    visitor, shop, inbox, base = browser.page, stack["shop"], stack["inbox"], stack["server"].url
    streams: list[int] = []
    visitor.on("response", lambda r: streams.append(r.status) if "/events/" in r.url else None)
    visitor.goto(shop.origin + "/")
    visitor.get_by_role("button", name="Open chat").click()
    expect(visitor.locator("[data-helpdesk-widget]")).to_have_attribute("data-widget-state", "ready")
    visitor.get_by_label("Your message").fill("Where is my order?")
    visitor.get_by_label("Your message").press("Enter")
    expect(visitor.locator("[data-widget-message=visitor]")).to_have_count(1)
    # The first message starts the conversation; the widget then opens a stream that follows it.
    wait_until(visitor, lambda: streams.count(200) >= 2)
    conversation = Message.objects.get(content="Where is my order?").conversation
    typing = visitor.locator("[data-widget-typing]")
    expect(typing).to_be_hidden()

    agent = visitor.context.new_page()
    signals: list[str] = []
    agent.on("request", lambda r: signals.append(r.method) if r.url.endswith("/typing/") else None)
    agent.goto(f"{base}/auth/login/?next=/app/")
    agent.fill("#id_username", "sam")
    agent.fill("#id_password", PASSWORD)
    agent.click("button:has-text('Sign in')")
    agent.goto(f"{base}/app/accounts/{inbox.account_id}/conversations/{conversation.id}/")
    composer = agent.locator("#composer-text")

    # A private note: the customer must not even learn one is being written.
    agent.get_by_role("radio", name="Private note").check()
    composer.press_sequentially(NOTE, delay=60)  # about 3 s of typing
    agent.wait_for_timeout(1500)
    assert signals == []
    expect(typing).to_be_hidden()

    composer.fill("")
    agent.get_by_role("radio", name="Reply to the customer").check()
    started = time.monotonic()
    composer.press_sequentially(REPLY, delay=60)  # over 70 keys in about 5 s
    typed_for = time.monotonic() - started
    expect(typing).to_be_visible(timeout=10_000)
    browser.shot("agent-typing")
    # One signal at the first key, then at most one every 3 s: never one per key.
    assert 1 <= len(signals) <= 1 + int(typed_for // 3), (signals, typed_for)
    assert set(signals) == {"POST"}
    # Nothing was sent to the customer: "typing" came from the composer alone.
    assert not Message.objects.filter(conversation=conversation, message_type=Message.Type.OUTGOING).exists()
    assert browser.console_errors == []
    agent.close()
