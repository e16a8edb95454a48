"""The dashboard in a real browser (system chromium through Playwright), against the live server.

The escalated conversation is produced by the real AI path: `run_for_message` (what the Celery task calls)
with the real `openai` SDK talking HTTP to the scripted model server, which answers `handoff_to_human`.
Delivery to the fake channel (an API inbox whose callback URL is a CallbackReceiver) runs the real delivery
task body in this process with `message_deliver.apply(...)` instead of a worker process: the web request
queues the task in Redis exactly as in production, and the end-to-end suite (tests/e2e) already proves a real
worker picks such tasks up; here it keeps the browser test fast and deterministic. The playground's turn task is
run the same way (`answer_pending_playground_turn`), while the page shows its progress and reloads itself.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from captain.answering.models import CreditLedgerEntry, ReplyJob, Run
from captain.answering.services.runs import run_for_message
from captain.playground.models import PlaygroundRun
from captain.playground.tasks import playground_turn
from helpdesk.models import Conversation, Membership, Message
from helpdesk.tasks import message_deliver
from tests.factories import (
    AssistantInboxFactory,
    ConversationFactory,
    MembershipFactory,
    MessageFactory,
    ScenarioFactory,
    UserFactory,
)
from tests.support import fake_llm_server as fake
from tests.support.callback_receiver import CallbackReceiver

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

XSS = "<img src=x onerror=alert(1)><script>window.__xss=1</script>"
AI_XSS = "Noted: " + XSS


@pytest.fixture
def receiver():
    with CallbackReceiver() as r:
        yield r


@pytest.fixture
def helpdesk(redis_url, llm_settings, receiver):
    """An account with an AI assistant on an API inbox whose replies go to the callback receiver."""
    link = AssistantInboxFactory(
        assistant__name="Captain",
        inbox__name="Website chat",
        inbox__callback_url=receiver.url,
        inbox__secret="browser-secret",
    )
    ScenarioFactory(assistant=link.assistant, title="Refunds", key="refunds", description="Refund requests")
    admin = UserFactory(username="alice", first_name="Alice")
    MembershipFactory(account=link.assistant.account, user=admin, role=Membership.Role.ADMIN)
    return {
        "account": link.assistant.account,
        "inbox": link.inbox,
        "assistant": link.assistant,
        "admin": admin,
    }


def open_the_app(browser, live_server, sign_in, username: str = "alice") -> None:
    """The app sends a stranger to the login page, and back to the app once signed in."""
    page = browser.page
    page.goto(f"{live_server.url}/app/")
    expect(page).to_have_url(f"{live_server.url}/auth/login/?next=/app/")
    browser.shot("sign-in")
    sign_in(page, live_server.url, username, go=False)


def customer_writes(helpdesk, text: str, conversation=None):
    conversation = conversation or ConversationFactory(
        contact_inbox__inbox=helpdesk["inbox"], status="pending"
    )
    message = MessageFactory(conversation=conversation, content=text, reply_job=ReplyJob.Status.PENDING)
    return conversation, message


def assert_nothing_ran(browser) -> None:
    assert browser.dialogs == []
    assert browser.page.evaluate("typeof window.__xss") == "undefined"


def test_agent_takes_over_an_escalated_conversation_replies_and_resolves(
    browser, sign_in, live_server, helpdesk, llm_settings, receiver
):
    # The AI escalates, for real: the scripted model calls handoff_to_human.
    llm_settings.push(
        fake.tool_call("handoff_to_human", {"reason": "Wants to cancel the contract", "priority": "high"})
    )
    conversation, message = customer_writes(helpdesk, "Cancel my contract. I want to talk to a human.")
    conversation.contact.name = "Dana Customer"
    conversation.contact.save()
    assert run_for_message(message_id=message.id) == "human_handoff"
    handoff_message = conversation.messages.get(message_type="outgoing", private=False)
    assert message_deliver.apply(args=[handoff_message.id]).get() == "sent"

    page = browser.page
    open_the_app(browser, live_server, sign_in)
    expect(page).to_have_url(f"{live_server.url}/app/accounts/{helpdesk['account'].id}/lists/needs-people/")
    row = page.locator(f'tr[data-conversation="{conversation.id}"]')
    expect(row).to_contain_text("Wants to cancel the contract")
    expect(row).to_contain_text("Dana Customer")
    expect(row.locator("td.waiting")).not_to_have_text("—")
    browser.shot("needs-people-list")

    row.locator("a", has_text="Dana Customer").click()
    expect(page.locator(".escalation")).to_contain_text("Wants to cancel the contract")
    expect(page.locator(".msg.note")).to_contain_text("Handoff reason: Wants to cancel the contract")
    expect(page.locator(".msg.ai .delivery")).to_have_text("Sent")
    browser.shot("escalated-conversation")

    page.click("text=AI debug log of this conversation")
    expect(page.locator(".run h2")).to_contain_text("Human handoff")
    expect(page.locator(".run")).to_contain_text("Tool handoff_to_human")
    expect(page.locator(".run")).to_contain_text("LLM call #1")
    expect(page.locator(".run-summary")).to_contain_text("none charged")
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    expect(page.locator(".llm-input").first).to_contain_text("Cancel my contract. I want to talk to a human.")
    expect(page.locator(".llm-output").first).to_contain_text("handoff_to_human")
    browser.shot("debug-log")

    page.go_back()
    page.click("button[data-action='take_over']")
    # A one-click action: the side panel answers in place (htmx), no reload and no flash message.
    expect(page.locator("#action-result")).to_contain_text("You took over")
    browser.shot("taken-over")

    page.fill("textarea[name=content]", "Hi Dana, I'm Alice. I'll cancel it for you right away.")
    page.click(".reply button[type=submit]")
    expect(page.locator(".flash")).to_contain_text("Reply queued for delivery")
    reply = conversation.messages.get(sender_type="user", private=False)
    reply_status = page.locator(f'[data-delivery="{reply.id}"]')
    expect(reply_status).to_have_text("Queued")

    # The web request queued the delivery task; run it here, then watch the page learn the new status by polling.
    assert message_deliver.apply(args=[reply.id]).get() == "sent"
    texts = [event["json"]["text"] for event in receiver.events]
    assert texts == [handoff_message.content, "Hi Dana, I'm Alice. I'll cancel it for you right away."]
    assert receiver.events[1]["json"]["sender"]["type"] == "user"
    expect(reply_status).to_have_text("Sent", timeout=10_000)
    browser.shot("reply-delivered")

    # A new customer message appears without a reload.
    MessageFactory(conversation=conversation, content="Thank you, Alice!")
    expect(page.locator(".msg.customer").last).to_contain_text("Thank you, Alice!", timeout=10_000)

    page.click("button[data-action='resolve']")
    expect(page.locator("#status")).to_have_text("Resolved")
    browser.shot("resolved")
    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.RESOLVED
    assert conversation.assignee == helpdesk["admin"]
    assert browser.console_errors == []


def answer_pending_playground_turn() -> None:
    """Do what a worker does with the task the page's request queued."""
    (run,) = PlaygroundRun.objects.filter(status=PlaygroundRun.Status.QUEUED)
    playground_turn.apply(args=(run.pk,))


def test_playground_round_trip(browser, sign_in, live_server, helpdesk, llm_settings):
    def model(request: dict) -> fake.Step:
        if "handoff_to_refunds" in fake.offered_tools(request):
            return fake.tool_call("handoff_to_refunds", {"reason": "refund question"})
        return fake.text("Refunds reach your card within 5 business days.")

    llm_settings.set_responder(model)
    # The reply's "5 business days" must come from somewhere the grounding check accepts.
    helpdesk["assistant"].instructions = "Refunds reach the customer's card within 5 business days."
    helpdesk["assistant"].save()
    before = (Conversation.objects.count(), Message.objects.count(), Run.objects.count())
    page = browser.page
    open_the_app(browser, live_server, sign_in)
    page.click("nav.admin-links >> text=Playground")
    expect(page.locator("h1")).to_have_text("Playground")
    browser.shot("playground-empty")

    page.fill("textarea[name=message]", "How long does a refund take?")
    page.click("button[name=send]")
    expect(page.locator("#playground-pending")).to_contain_text("Waiting for a worker")
    expect(page.locator("button[name=send]")).to_be_disabled()
    browser.shot("playground-waiting")
    answer_pending_playground_turn()
    ai = page.locator(".msg.ai").last
    expect(ai).to_contain_text("Refunds reach your card within 5 business days.")
    expect(ai).to_contain_text("route assistant → refunds")
    expect(ai.locator(".agent")).to_have_text("Refunds")
    debug = page.locator("#debug-log")
    expect(debug).to_contain_text("Handoff assistant → refunds")
    expect(debug.locator("text=LLM call #")).to_have_count(2)
    expect(debug).to_contain_text("none (playground)")
    browser.shot("playground-reply")

    assert (Conversation.objects.count(), Message.objects.count(), Run.objects.count()) == before
    assert CreditLedgerEntry.objects.count() == 0


def test_html_and_script_from_customers_and_the_model_render_as_text(
    browser, sign_in, live_server, helpdesk, llm_settings
):
    # The AI's reply is not the customer's message word for word: the grounding check refuses an echo.
    llm_settings.push(fake.text(AI_XSS))
    conversation, message = customer_writes(helpdesk, XSS)
    conversation.contact.name = XSS
    conversation.contact.save()
    assert run_for_message(message_id=message.id) == "reply"
    Conversation.objects.filter(pk=conversation.pk).update(escalation_reason=XSS)

    page = browser.page
    open_the_app(browser, live_server, sign_in)
    page.goto(f"{live_server.url}/app/accounts/{helpdesk['account'].id}/lists/ai/")
    expect(page.locator(f'tr[data-conversation="{conversation.id}"] td.preview')).to_have_text(XSS)
    browser.shot("xss-list")
    assert_nothing_ran(browser)

    page.goto(f"{live_server.url}/app/accounts/{helpdesk['account'].id}/conversations/{conversation.id}/")
    expect(page.locator(".msg.customer .body").first).to_have_text(XSS)
    expect(page.locator(".msg.ai .body").first).to_have_text(AI_XSS)
    # One more arrives through the poll (inserted as an HTML fragment): still text.
    MessageFactory(conversation=conversation, content=XSS + " (again)")
    expect(page.locator(".msg.customer .body").last).to_have_text(XSS + " (again)", timeout=10_000)
    browser.shot("xss-conversation")
    assert_nothing_ran(browser)

    page.goto(
        f"{live_server.url}/app/accounts/{helpdesk['account'].id}/conversations/{conversation.id}/runs/"
    )
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    expect(page.locator(".llm-output .output-text").first).to_have_text(AI_XSS)
    browser.shot("xss-debug-log")
    assert_nothing_ran(browser)

    llm_settings.push(fake.text(AI_XSS))
    page.goto(f"{live_server.url}/app/accounts/{helpdesk['account'].id}/playground/")
    page.fill("textarea[name=message]", XSS)
    page.click("button[name=send]")
    expect(page.locator("#playground-pending")).to_be_visible()
    answer_pending_playground_turn()
    expect(page.locator(".msg.ai .body").last).to_have_text(AI_XSS)
    browser.shot("xss-playground")
    assert_nothing_ran(browser)
    assert page.locator("script:not([src])").count() == 0  # no inline script anywhere on our pages
