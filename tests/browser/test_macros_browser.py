"""Macros in a real browser, at a phone's and a laptop's width: the conversation page's Macros box is reached with
the `m` shortcut, runs "Refund done" (label, note, resolve) in one click, and each action shows as its own line;
on the list, a macro runs on the ticked conversations. An admin's automation rule, made in the Django admin,
labels a new conversation. Nothing scrolls sideways; screenshots go to test-output/screenshots/."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from helpdesk.channels.base import InboundContact, InboundMessage
from helpdesk.models import AutomationRule, Conversation, Macro, Membership
from helpdesk.services.automation_rules import automation_evaluate
from helpdesk.services.messages import message_ingest
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
    Macro.objects.create(
        account=account,
        name="Refund done",
        actions=[
            {"kind": "add_label", "value": "refund"},
            {"kind": "add_note", "value": "Refund sent by bank transfer."},
            {"kind": "resolve"},
        ],
    )
    conversations = []
    for name in ("Rita Refund", "Sam Second", "Tom Third"):
        conversation = ConversationFactory(
            contact_inbox=ContactInboxFactory(inbox=inbox, contact__name=name),
            status=Conversation.Status.OPEN,
        )
        MessageFactory(conversation=conversation, content="Where is my refund?")
        conversations.append(conversation)
    return {"account": account, "inbox": inbox, "conversations": conversations}


def horizontal_overflow(page) -> int:
    return page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth")


@pytest.mark.parametrize("device", list(WIDTHS))
def test_a_macro_runs_from_the_conversation_page_and_on_the_ticked(
    browser, sign_in, live_server, desk, device
):
    page = browser.page
    width, height = WIDTHS[device]
    page.set_viewport_size({"width": width, "height": height})
    sign_in(page, live_server.url, "bob", wait_for="**/lists/**")
    base = f"{live_server.url}/app/accounts/{desk['account'].id}"
    first, second, third = desk["conversations"]

    page.goto(f"{base}/conversations/{first.id}/")
    if width < 900:
        page.click("a.to-actions")
    page.keyboard.press("m")
    expect(page.locator("#side-panel select[data-macro-picker]")).to_be_focused()
    page.click("#side-panel button[data-macro-run]")
    expect(page.locator("body")).to_contain_text("Macro “Refund done” ran on 1 conversation: 3 actions done.")
    lines = page.locator("#thread .msg.activity")
    expect(lines.first).to_contain_text("Macro “Refund done” run by bob.")
    expect(page.locator("#thread")).to_contain_text("Refund sent by bank transfer.")
    expect(page.locator("#status")).to_contain_text("Resolved")
    assert horizontal_overflow(page) <= 0
    browser.shot(f"macro-{device}-conversation")

    page.goto(f"{base}/lists/needs-people/")
    for conversation in (second, third):
        page.check(f'tr[data-conversation="{conversation.id}"] input[name=ids]')
    page.click("button[data-macro-run]")
    expect(page.locator("body")).to_contain_text("ran on 2 conversations: 6 actions done.")
    expect(page.locator("tr[data-conversation]")).to_have_count(0)
    assert Conversation.objects.filter(status=Conversation.Status.RESOLVED).count() == 3
    assert horizontal_overflow(page) <= 0
    browser.shot(f"macro-{device}-list")
    assert browser.console_errors == []


def test_an_admins_rule_made_in_the_admin_labels_a_new_conversation(browser, sign_in, live_server, desk):
    admin = UserFactory(username="ada", is_staff=True)
    MembershipFactory(account=desk["account"], user=admin, role=Membership.Role.ADMIN)
    page = browser.page
    sign_in(page, live_server.url, "ada", wait_for="**/lists/**")
    page.goto(f"{live_server.url}/admin/helpdesk/automationrule/add/")
    page.select_option("select[name=account]", str(desk["account"].id))
    page.fill("input[name=name]", "Refunds to billing")
    page.select_option("select[name=event]", "conversation_created")
    page.fill("textarea[name=conditions]", '{"text_contains": "refund"}')
    page.fill("textarea[name=actions]", '[{"kind": "add_label", "value": "billing"}]')
    page.click("input[name=_save]")
    expect(page.locator(".messagelist")).to_contain_text("was added successfully")
    rule = AutomationRule.objects.get(name="Refunds to billing")
    assert rule.conditions == {"text_contains": "refund"}

    stored = message_ingest(
        inbox=desk["inbox"],
        inbound=InboundMessage("new-1", InboundContact("new-customer"), "I want a refund"),
    ).message
    # The worker's task, run here: the rule's evaluation for the event the ingest published.
    automation_evaluate(event="conversation_created", conversation_id=stored.conversation_id)
    page.goto(f"{live_server.url}/app/accounts/{desk['account'].id}/conversations/{stored.conversation_id}/")
    expect(page.locator("#thread")).to_contain_text("Automation added the label “billing”.")
    # The live server has no /favicon.ico (not ours); anything else in the console is an error.
    assert [e for e in browser.console_errors if "404 (Not Found)" not in e] == []
