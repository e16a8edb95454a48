"""Who did what, in a real browser at a phone's and a laptop's width: taking a conversation over from the AI takes it
out of "Needs people" (into "Mine"), and the take over, the priority and the team each show as a line in the thread
without a reload. Nothing scrolls sideways; screenshots go to test-output/screenshots/.

Clicks: take over = 1 (as before; it now also leaves "Needs people", where before a colleague still saw it
waiting); who did what = 0 (the lines are in the thread; before, nowhere)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from helpdesk.models import Conversation, Membership, Team, TeamMember
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

WIDTHS = {"phone": (375, 740), "laptop": (1366, 768)}


@pytest.fixture
def desk(redis_url):
    account = AccountFactory(name="Acme")
    inbox = InboxFactory(account=account, name="Website chat")
    bob = UserFactory(username="bob")
    MembershipFactory(account=account, user=bob, role=Membership.Role.AGENT)
    # Bob is in Billing: moving his conversation there keeps it his (a holder from outside a team that assigns
    # lets go of it, which tests/dashboard/test_team_move.py shows).
    TeamMember.objects.create(team=Team.objects.create(account=account, name="Billing"), user=bob)
    ai = ConversationFactory(
        contact_inbox=ContactInboxFactory(inbox=inbox, contact__name="Ann AI"),
        status=Conversation.Status.PENDING,
    )
    MessageFactory(conversation=ai, content="Can I change my delivery address?")
    waiting = ConversationFactory(
        contact_inbox=ContactInboxFactory(inbox=inbox, contact__name="Wes Waiting"),
        status=Conversation.Status.OPEN,
        escalation_reason="The customer asked for a person.",
        waiting_since=timezone.now() - dt.timedelta(minutes=5),
    )
    MessageFactory(conversation=waiting, content="A person please")
    return {"account": account, "ai": ai, "waiting": waiting}


def horizontal_overflow(page) -> int:
    return page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth")


@pytest.mark.parametrize("device", list(WIDTHS))
def test_take_over_leaves_needs_people_and_every_change_is_a_line(
    browser, sign_in, live_server, desk, device
):
    page = browser.page
    width, height = WIDTHS[device]
    page.set_viewport_size({"width": width, "height": height})
    sign_in(page, live_server.url, "bob", wait_for="**/lists/**")
    base = f"{live_server.url}/app/accounts/{desk['account'].id}"
    ai, waiting = desk["ai"], desk["waiting"]

    page.goto(f"{base}/lists/ai/")
    page.locator(f'tr[data-conversation="{ai.id}"] td.customer a').click()
    expect(page.locator(".page-head h1")).to_contain_text("Ann AI")
    phone = width < 900
    if phone:
        page.click("a.to-actions")
    page.click("#side-panel button[data-action='take_over']")
    expect(page.locator("#status")).to_contain_text("Open")
    page.select_option("#side-panel select[name=priority]", "high")
    page.click("#side-panel form:has(select[name=priority]) button")
    expect(page.locator("#action-result")).to_contain_text("Priority set to high")
    page.select_option("#side-panel select[name=team]", label="Billing")
    page.click("#side-panel form:has(select[name=team]) button")
    expect(page.locator("#action-result")).to_contain_text("Team set to Billing")
    if phone:
        page.click("#side-panel .close-actions a")

    # Each change is a line in the thread, arriving without a reload.
    thread = page.locator("#thread .msg.activity")
    expect(thread).to_have_count(3)
    expect(thread.nth(0)).to_contain_text("bob took over from the AI.")
    expect(thread.nth(1)).to_contain_text("bob set the priority to high.")
    expect(thread.nth(2)).to_contain_text("bob gave the conversation to the team Billing.")
    assert horizontal_overflow(page) <= 0
    browser.shot(f"{device}-lines")

    # Taken over: in "Mine", no longer in "Needs people" (only the customer still waiting for somebody is).
    page.goto(f"{base}/lists/needs-people/")
    expect(page.locator("tr[data-conversation]")).to_have_count(1)
    expect(page.locator(f'tr[data-conversation="{waiting.id}"]')).to_be_visible()
    expect(page.locator('[data-folder-count="needs-people"]')).to_have_text("1")
    expect(page.locator('[data-folder-count="mine"]')).to_have_text("1")
    assert horizontal_overflow(page) <= 0
    browser.shot(f"{device}-needs-people")
    page.goto(f"{base}/lists/mine/")
    expect(page.locator(f'tr[data-conversation="{ai.id}"]')).to_be_visible()
    assert browser.console_errors == []
