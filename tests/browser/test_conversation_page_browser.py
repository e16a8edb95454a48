"""The conversation page's conveniences in a real browser (Debian's chromium through Playwright): the "/"
canned-response picker, reply vs private note (look and result), one-click side-panel actions without a reload,
and snooze. The page's CSP is the production one: any inline script or style htmx tried would be a console error,
and every test ends by asserting there were none."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect

from helpdesk.models import CannedResponse, Conversation, Delivery, Membership, Message
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
    """An account (Berlin time) with an agent and an open conversation with Dana; another account with a
    canned response of the same short code that must never show."""
    account = AccountFactory(name="Acme", time_zone="Europe/Berlin")
    inbox = InboxFactory(account=account, name="Website chat")
    agent = UserFactory(username="bob", first_name="Bob")
    MembershipFactory(account=account, user=agent, role=Membership.Role.AGENT)
    link = ContactInboxFactory(inbox=inbox, contact__name="Dana", source_id="visitor-7")
    conversation = ConversationFactory(contact_inbox=link, status="pending")
    MessageFactory(conversation=conversation, content="Where is my refund?")
    CannedResponse.objects.create(
        account=account, short_code="refund", content="Hi {{contact.name}}, refunds take 5 days."
    )
    CannedResponse.objects.create(account=account, short_code="refund-late", content="Sorry for the wait.")
    CannedResponse.objects.create(account=account, short_code="hello", content="Hello there!")
    other = AccountFactory(name="Globex")
    CannedResponse.objects.create(account=other, short_code="refund-secret", content="Globex internal text")
    return {"account": account, "agent": agent, "conversation": conversation}


def open_conversation(browser, live_server, desk, sign_in) -> object:
    page = browser.page
    sign_in(page, live_server.url, "bob", wait_for="**/lists/**")
    page.goto(f"{live_server.url}/app/accounts/{desk['account'].id}/conversations/{desk['conversation'].id}/")
    expect(page.locator("#composer")).to_be_visible()
    return page


def test_slash_inserts_a_canned_response(browser, sign_in, live_server, desk):
    page = open_conversation(browser, live_server, desk, sign_in)
    box = page.locator("#composer-text")
    box.click()
    box.press_sequentially("Thanks! /ref")
    picker = page.locator("#canned-picker")
    expect(picker).to_be_visible()
    expect(picker.locator("li[role=option]")).to_have_count(2)  # never Globex's "refund-secret"
    expect(picker).not_to_contain_text("Globex")
    expect(picker.locator("li.active")).to_contain_text("/refund")
    browser.shot("picker-open")
    page.keyboard.press("ArrowDown")
    expect(picker.locator("li.active")).to_contain_text("/refund-late")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Enter")
    expect(picker).to_be_hidden()
    # The "/ref" typed is replaced by the content, placeholders filled; Enter did not submit the form.
    expect(box).to_have_value("Thanks! Hi Dana, refunds take 5 days.")
    # Tab inserts too; Esc closes without inserting.
    box.press_sequentially(" /hel")
    expect(picker.locator("li.active")).to_contain_text("/hello")
    page.keyboard.press("Tab")
    expect(box).to_have_value("Thanks! Hi Dana, refunds take 5 days. Hello there!")
    box.press_sequentially(" /ref")
    expect(picker).to_be_visible()
    page.keyboard.press("Escape")
    expect(picker).to_be_hidden()
    expect(box).to_have_value("Thanks! Hi Dana, refunds take 5 days. Hello there! /ref")
    browser.shot("inserted")
    assert Message.objects.filter(conversation=desk["conversation"]).count() == 1  # nothing was sent
    assert browser.console_errors == []


def test_a_late_canned_lookup_does_not_reopen_a_picker_closed_with_escape(
    browser, sign_in, live_server, desk
):
    page = open_conversation(browser, live_server, desk, sign_in)
    box = page.locator("#composer-text")
    box.click()
    box.press_sequentially("/hel")
    picker = page.locator("#canned-picker")
    expect(picker.locator("li.active")).to_contain_text("/hello")
    held = []
    page.route("**/canned-responses/**", lambda route: held.append(route))  # answered only when released
    box.press_sequentially("l")
    page.wait_for_timeout(100)  # let the lookup reach the route, where it waits
    page.keyboard.press("Escape")
    expect(picker).to_be_hidden()
    assert held, "the lookup for '/hell' was not sent"
    for route in held:
        route.continue_()
    page.wait_for_timeout(300)  # the held answer arrives after Escape ...
    expect(picker).to_be_hidden()  # ... and is ignored: the picker stays closed
    assert box.input_value() == "/hell"
    assert browser.console_errors == []


def test_note_and_reply_look_different_and_a_note_is_never_delivered(browser, sign_in, live_server, desk):
    page = open_conversation(browser, live_server, desk, sign_in)
    composer = page.locator("#composer")
    send = composer.locator("button.send")
    banner = composer.locator(".note-banner")
    expect(send).to_have_text("Send reply", use_inner_text=True)
    expect(banner).to_be_hidden()
    reply_background = composer.evaluate("el => getComputedStyle(el).backgroundColor")

    page.check("input[name=kind][value=note]")
    expect(composer).to_have_attribute("data-kind", "note")
    expect(send).to_have_text("Add note", use_inner_text=True)
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("the customer will not see this")
    assert composer.evaluate("el => getComputedStyle(el).backgroundColor") != reply_background
    browser.shot("note-mode")

    page.fill("#composer-text", "VIP customer, be nice")
    send.click()
    expect(page.locator(".flash")).to_contain_text("Private note added")
    note = Message.objects.get(
        conversation=desk["conversation"], private=True, content="VIP customer, be nice"
    )
    assert not Delivery.objects.filter(message=note).exists()
    thread_note = page.locator(f"#m-{note.id}")
    expect(thread_note).to_have_class("msg note")
    expect(thread_note).to_contain_text("not seen by the customer")
    # After a note the composer stays on "note" for this conversation (it is remembered, not reset to reply);
    # the agent switches to reply on purpose, and a reply is delivered.
    expect(send).to_have_text("Add note", use_inner_text=True)
    expect(composer).to_have_attribute("data-kind", "note")
    page.check("input[name=kind][value=reply]")
    expect(send).to_have_text("Send reply", use_inner_text=True)
    page.fill("#composer-text", "Your refund is on its way.")
    send.click()
    expect(page.locator(".flash")).to_contain_text("Reply queued for delivery")
    reply = Message.objects.get(conversation=desk["conversation"], private=False, sender_type="user")
    assert Delivery.objects.filter(message=reply).exists()
    expect(page.locator(f"#m-{reply.id}")).to_have_class("msg human")
    browser.shot("note-and-reply")
    assert browser.console_errors == []


def test_one_click_actions_do_not_reload_the_page(browser, sign_in, live_server, desk):
    page = open_conversation(browser, live_server, desk, sign_in)
    navigations: list[str] = []
    page.on(
        "framenavigated", lambda frame: navigations.append(frame.url) if frame == page.main_frame else None
    )
    page.evaluate("window.__sameDocument = true")
    url = page.url

    page.click("button[data-action='take_over']")
    expect(page.locator("#status")).to_contain_text("Open")
    expect(page.locator("#action-result")).to_contain_text("You took over")
    expect(page.locator("button[data-action='hand_back']")).to_be_visible()

    page.select_option("select[name=priority]", "urgent")
    page.click("form:has(select[name=priority]) button")
    expect(page.locator("#action-result")).to_contain_text("Priority set to urgent")

    page.fill("input[name=name][list=account-labels]", "vip")
    page.click("form:has(input[list=account-labels]) button")
    expect(page.locator(".side-panel .badge.label")).to_contain_text("vip")
    page.click("button[aria-label='Remove label vip']")
    expect(page.locator("#action-result")).to_contain_text("removed")

    page.select_option("select[name=assignee]", "")
    page.click("form:has(select[name=assignee]) button")
    expect(page.locator("#action-result")).to_contain_text("unassigned")

    page.click("button[data-action='resolve']")
    expect(page.locator("#status")).to_have_text("Resolved")
    expect(page.locator("button[data-action='reopen']")).to_be_visible()
    page.click("button[data-action='reopen']")
    expect(page.locator("#status")).to_contain_text("Open")
    browser.shot("after-actions")

    # The same document all along: no navigation, the marker survived, the URL did not change.
    assert page.evaluate("window.__sameDocument") is True
    assert navigations == [] and page.url == url
    conversation = Conversation.objects.get(pk=desk["conversation"].pk)
    assert (conversation.status, conversation.priority, conversation.assignee_id) == ("open", "urgent", None)
    assert list(conversation.labels.all()) == []
    # The status poll does not take these changes for someone else's: no "changed status" banner.
    page.wait_for_timeout(3500)
    expect(page.locator("#changed-banner")).to_be_hidden()
    assert browser.console_errors == []


def test_snooze_until_tomorrow_morning(browser, sign_in, live_server, desk):
    page = open_conversation(browser, live_server, desk, sign_in)
    page.evaluate("window.__sameDocument = true")
    page.click("button[data-snooze='tomorrow']")
    expect(page.locator("#status")).to_contain_text("Snoozed until")
    expect(page.locator("#action-result")).to_contain_text("(Europe/Berlin)")
    expect(page.locator("button[data-action='reopen']")).to_have_text("Wake up now")
    browser.shot("snoozed")
    assert page.evaluate("window.__sameDocument") is True

    conversation = Conversation.objects.get(pk=desk["conversation"].pk)
    berlin = ZoneInfo("Europe/Berlin")
    tomorrow = (dt.datetime.now(berlin) + dt.timedelta(days=1)).date()
    assert conversation.status == Conversation.Status.SNOOZED
    assert conversation.snoozed_until == dt.datetime(
        tomorrow.year, tomorrow.month, tomorrow.day, 9, tzinfo=berlin
    )

    page.click(".folders a[href$='/lists/snoozed/']")
    row = page.locator(f'tr[data-conversation="{conversation.id}"]')
    expect(row).to_contain_text("09:00")
    expect(row.locator("td.preview")).to_have_text("Where is my refund?")
    browser.shot("snoozed-list")
    assert browser.console_errors == []
