"""The agents' workspace in a real browser (Debian's chromium through Playwright) at a phone's, a tablet's and a
laptop's width: no horizontal scroll anywhere, the reply box in view when a conversation opens, the list beside
the conversation on a wide screen and one pane with a back link on a narrow one. Screenshots of every width go
to test-output/screenshots/ for a reviewer."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from helpdesk.models import Conversation, Membership
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

LONG_WORD = "Refund" * 40  # one 240-character word: it must break, not widen the page
WIDTHS = {"phone": (375, 740), "tablet": (768, 1024), "laptop": (1366, 768)}


@pytest.fixture
def queue(redis_url):
    """Five conversations handed to people, oldest waiting first; the oldest has a long thread."""
    account = AccountFactory(name="Acme")
    inbox = InboxFactory(account=account, name="Website chat with a rather long inbox name")
    agent = UserFactory(username="bob", first_name="Bob")
    MembershipFactory(account=account, user=agent, role=Membership.Role.AGENT)
    now = timezone.now()
    conversations = []
    for n in range(5):
        link = ContactInboxFactory(inbox=inbox, contact__name=f"Customer {n}", source_id=f"visitor-{n}")
        conversation = ConversationFactory(
            contact_inbox=link,
            status=Conversation.Status.OPEN,
            escalation_reason="The customer asked for a person",
            waiting_since=now - dt.timedelta(minutes=60 - n),
        )
        MessageFactory(conversation=conversation, content=f"Where is my order {n}? {LONG_WORD}")
        conversations.append(conversation)
    for n in range(30):
        MessageFactory(conversation=conversations[0], content=f"Message {n}: still waiting for the parcel.")
    return {"account": account, "conversations": conversations}


def horizontal_overflow(page) -> int:
    """How many pixels the page is wider than the window (0 when nothing scrolls sideways)."""
    return page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth")


def composer_in_view(page) -> bool:
    box = page.evaluate(
        "(() => { const r = document.getElementById('composer').getBoundingClientRect();"
        " return [r.top, r.bottom, window.innerHeight]; })()"
    )
    top, bottom, height = box
    return top >= 0 and bottom <= height


@pytest.mark.parametrize("device", list(WIDTHS))
def test_workspace_fits_the_screen_with_the_composer_in_view(browser, sign_in, live_server, queue, device):
    page = browser.page
    width, height = WIDTHS[device]
    page.set_viewport_size({"width": width, "height": height})
    sign_in(page, live_server.url, "bob", wait_for="**/lists/**")
    account_id = queue["account"].id
    oldest = queue["conversations"][0]

    page.goto(f"{live_server.url}/app/accounts/{account_id}/lists/needs-people/")
    expect(page.locator("tr[data-conversation]")).to_have_count(5)
    assert horizontal_overflow(page) <= 0
    browser.shot(f"{device}-list")

    page.locator(f'tr[data-conversation="{oldest.id}"] td.customer a').click()
    expect(page.locator("#composer")).to_be_visible()
    page.wait_for_timeout(200)  # the page scrolls to the latest messages once loaded
    assert horizontal_overflow(page) <= 0
    assert composer_in_view(page)
    expect(page.locator(".msg.customer").last).to_be_in_viewport()
    browser.shot(f"{device}-conversation")

    pane = page.locator(".queue-pane")
    if width < 900:
        # One pane: no list beside the conversation; the back link returns to the same list.
        expect(pane).to_be_hidden()
        page.click("a.to-actions")
        expect(page.locator("#side-panel button[data-action='resolve']")).to_be_in_viewport()
        assert horizontal_overflow(page) <= 0
        browser.shot(f"{device}-actions")
        page.click("#side-panel .close-actions a")
        page.click("a.back-to-list")
        page.wait_for_url("**/lists/needs-people/")
        expect(page.locator("tr[data-conversation]")).to_have_count(5)
    else:
        expect(pane).to_be_visible()
        expect(pane.locator(".queue-item.current")).to_contain_text("Customer 0")
        pane.locator(f'[data-queue-item="{queue["conversations"][1].id}"] a').click()
        expect(page.locator(".page-head h1")).to_contain_text("Customer 1")
        assert composer_in_view(page)
        assert horizontal_overflow(page) <= 0
    assert browser.console_errors == []


def test_a_conversation_worked_with_the_keyboard_only(browser, sign_in, live_server, queue):
    """Open the queue's first conversation, read the shortcuts, take the next one, note, reply with
    Ctrl+Enter, assign to me, resolve and land on the next conversation, then search: no mouse."""
    page = browser.page
    sign_in(page, live_server.url, "bob", wait_for="**/lists/**")
    first, second, third = queue["conversations"][:3]
    base = f"{live_server.url}/app/accounts/{queue['account'].id}"
    page.goto(f"{base}/lists/needs-people/")

    page.keyboard.press("j")  # the first row gets the focus, Enter opens it
    expect(page.locator(f'tr[data-conversation="{first.id}"] td.customer a')).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(".page-head h1")).to_contain_text("Customer 0")
    # The heading is there before the page's scripts have run: a key pressed then is lost (seen once in CI).
    page.wait_for_load_state("load")

    page.keyboard.press("?")
    expect(page.locator("#shortcuts")).to_be_visible()
    expect(page.locator("#shortcuts")).to_contain_text("Assign to me")
    browser.shot("shortcuts")
    page.keyboard.press("Escape")
    expect(page.locator("#shortcuts")).to_be_hidden()

    page.keyboard.press("j")
    expect(page.locator(".page-head h1")).to_contain_text("Customer 1")
    page.keyboard.press("k")
    expect(page.locator(".page-head h1")).to_contain_text("Customer 0")
    page.keyboard.press("j")
    expect(page.locator(".page-head h1")).to_contain_text("Customer 1")

    page.keyboard.press("n")
    expect(page.locator("#composer-text")).to_be_focused()
    expect(page.locator("#composer")).to_have_attribute("data-kind", "note")
    page.keyboard.type("Checked the courier: parcel is lost.")
    page.keyboard.press("Control+Enter")
    expect(page.locator(".flash")).to_contain_text("Private note added")

    page.keyboard.press("r")
    expect(page.locator("#composer")).to_have_attribute("data-kind", "reply")
    page.keyboard.type("We are sending a new parcel today.")
    page.keyboard.press("Control+Enter")
    expect(page.locator(".flash")).to_contain_text("Reply queued for delivery")
    # The reply kept the list: still "Needs people" beside it, still the next one on "j".
    expect(page.locator("a.back-to-list")).to_contain_text("Needs people")

    page.keyboard.press("a")
    expect(page.locator("#action-result")).to_contain_text("Assigned to")
    page.keyboard.press("e")
    expect(page.locator(".page-head h1")).to_contain_text("Customer 2")
    expect(page.locator(".flash")).to_contain_text(f"#{second.id}: Conversation resolved.")
    browser.shot("next-after-resolve")

    page.keyboard.press("/")
    page.wait_for_url("**/lists/needs-people/**")
    expect(page.locator(".filters input[name=q]")).to_be_focused()

    second.refresh_from_db()
    assert second.status == Conversation.Status.RESOLVED
    assert second.assignee.username == "bob"
    assert list(second.messages.filter(private=True).values_list("content", flat=True)) == [
        "Checked the courier: parcel is lost."
    ]
    assert second.messages.filter(private=False, sender_type="user").count() == 1
    third.refresh_from_db()
    assert third.status == Conversation.Status.OPEN
    assert browser.console_errors == []


def test_actions_follow_a_status_changed_elsewhere_without_a_reload(browser, sign_in, live_server, queue):
    """A colleague resolves the conversation an agent has open: its status, escalation box and actions change
    in place (no "Reload" banner, no Take over or Resolve on a resolved conversation), and still work."""
    from helpdesk.services.conversations import conversation_set_status

    page = browser.page
    sign_in(page, live_server.url, "bob", wait_for="**/lists/**")
    conversation = queue["conversations"][0]
    page.goto(f"{live_server.url}/app/accounts/{queue['account'].id}/conversations/{conversation.id}/")
    expect(page.locator("button[data-action='resolve']")).to_be_visible()
    expect(page.locator(".escalation")).to_contain_text("waiting")
    page.evaluate("window.__sameDocument = true")
    page.fill("#composer-text", "Half-written answer")

    colleague = UserFactory(username="carol")
    MembershipFactory(account=queue["account"], user=colleague, role=Membership.Role.AGENT)
    conversation_set_status(conversation=conversation, status=Conversation.Status.RESOLVED, actor=colleague)

    expect(page.locator("#status")).to_have_text("Resolved", timeout=15_000)
    expect(page.locator("button[data-action='reopen']")).to_be_visible()
    expect(page.locator("button[data-action='resolve']")).to_have_count(0)
    expect(page.locator("button[data-action='take_over']")).to_have_count(0)
    expect(page.locator(".escalation")).to_have_count(0)
    expect(page.locator(".banner")).to_have_count(0)
    expect(page.locator("#composer-text")).to_have_value("Half-written answer")
    browser.shot("resolved-elsewhere")

    page.click("button[data-action='reopen']")  # the swapped-in form still posts in the background
    expect(page.locator("#action-result")).to_contain_text("Conversation reopened")
    assert page.evaluate("window.__sameDocument") is True
    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.OPEN
    assert browser.console_errors == []


def test_bulk_resolve_three_from_the_list(browser, sign_in, live_server, queue):
    page = browser.page
    sign_in(page, live_server.url, "bob", wait_for="**/lists/**")
    picked = queue["conversations"][1:4]
    page.goto(f"{live_server.url}/app/accounts/{queue['account'].id}/lists/needs-people/")
    expect(page.locator("[data-bulk-apply]")).to_be_disabled()
    expect(page.locator("input[name=label][data-bulk-for]")).to_be_hidden()  # only what the action needs
    for conversation in picked:
        page.check(f'tr[data-conversation="{conversation.id}"] input[name=ids]')
    expect(page.locator("[data-bulk-count]")).to_have_text("3 ticked")
    browser.shot("three-ticked")
    page.click("[data-bulk-apply]")
    expect(page.locator(".flash")).to_contain_text("Resolved 3 conversations.")
    expect(page.locator("tr[data-conversation]")).to_have_count(2)
    browser.shot("after-bulk-resolve")
    assert all(
        c.status == Conversation.Status.RESOLVED
        for c in Conversation.objects.filter(pk__in=[c.pk for c in picked])
    )
    assert browser.console_errors == []


def test_folder_counts_follow_live_events_on_an_open_conversation(
    browser, sign_in, queue, redis_url, tmp_path
):
    """On the real web server (ASGI, the live event stream) with a real redis-server: a new customer writes
    while an agent has a conversation open; the sidebar's counts go up without a reload."""
    import json

    import httpx

    from helpdesk.channels.api_channel import signed_headers
    from tests.support.servers import start_test_web_server

    inbox = InboxFactory(account=queue["account"], name="Website API", secret="live-secret")
    server = start_test_web_server(redis_url=redis_url, tmp_path=tmp_path)
    try:
        page = browser.page
        sign_in(page, server.url, "bob")
        opened = queue["conversations"][0]
        page.goto(
            f"{server.url}/app/accounts/{queue['account'].id}/conversations/{opened.id}/?list=needs-people"
        )
        expect(page.locator("body")).to_have_attribute("data-live-state", "open")
        expect(page.locator('[data-folder-count="all"]')).to_have_text("5")
        page.evaluate("window.__sameDocument = true")

        body = json.dumps(
            {"message_id": "m-1", "contact": {"id": "ann", "name": "Ann"}, "text": "Hello?"}
        ).encode()
        response = httpx.post(
            f"{server.url}/webhooks/api/{inbox.webhook_token}/",
            content=body,
            headers={**signed_headers(inbox.secret, body), "Content-Type": "application/json"},
            timeout=10,
        )
        assert response.status_code == 200, response.text

        expect(page.locator('[data-folder-count="all"]')).to_have_text("6")
        expect(page.locator(".page-head h1")).to_contain_text("Customer 0")
        assert page.evaluate("window.__sameDocument") is True
        assert browser.console_errors == []
    finally:
        server.stop()
