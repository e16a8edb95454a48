"""Captain's pages in the dashboard: the debug log built from real spans of real runs (scripted model over
HTTP), the playground (nothing charged, no conversation), and the usage page."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.utils import timezone

from captain.answering.models import CreditBalance, CreditLedgerEntry, ReplyJob, Run, SpanRecord
from captain.answering.services.runs import run_for_message
from captain.playground.models import PlaygroundRun
from helpdesk.models import Conversation, Label, Message
from tests.factories import (
    AssistantInboxFactory,
    ConversationFactory,
    CreditLedgerEntryFactory,
    FaqEntryFactory,
    MessageFactory,
    RunFactory,
    ScenarioFactory,
)
from tests.support.fake_llm_server import text, tool_call
from tests.support.on_commit import not_realtime

from .conftest import count_queries

pytestmark = pytest.mark.django_db

MAX_DEBUG_LOG_QUERIES = 10
XSS = "<img src=x onerror=alert(1)><script>window.__xss=1</script>"


@pytest.fixture
def ai(team, redis_url, llm_settings):
    link = AssistantInboxFactory(assistant__account=team.account, inbox=team.inbox)
    ScenarioFactory(
        assistant=link.assistant,
        title="Refunds",
        key="refunds",
        description="Refund requests",
        tools=["faq_lookup"],
    )
    FaqEntryFactory(assistant=link.assistant)
    # These tests script the model's exact replies to arbitrary messages ("one", "two"): knowledge reaches the
    # model only through its search tool here, so nothing answers before it. Injection, the gate and the
    # grounding check have their own tests (tests/captain/answering, test_knowledge_citations.py).
    link.assistant.knowledge_mode = "tool"
    link.assistant.save()
    return {"assistant": link.assistant, "llm": llm_settings}


def customer_says(team, content: str, conversation=None):
    conversation = conversation or ConversationFactory(contact_inbox__inbox=team.inbox, status="pending")
    message = MessageFactory(conversation=conversation, content=content, reply_job=ReplyJob.Status.PENDING)
    return conversation, message


def runs_url(team, conversation) -> str:
    return f"/app/accounts/{team.account.id}/conversations/{conversation.id}/runs/"


def test_debug_log_shows_agents_handoffs_llm_calls_tools_outcome_and_credits(admin_client, team, ai):
    ai["llm"].push(
        tool_call("handoff_to_refunds", {"reason": "wants money back"}),
        tool_call("faq_lookup", {"query": "refund time"}),
        text("Refunds take 5 business days.", prompt_tokens=321, completion_tokens=9),
    )
    conversation, message = customer_says(team, "How long does a refund take?")
    assert run_for_message(message_id=message.id) == "reply"

    html = admin_client.get(runs_url(team, conversation)).content.decode()
    assert "Run #" in html and "outcome-reply" in html
    assert "Route: <b>assistant → refunds</b>" in html
    assert "<b>Captain</b>" in html and "<b>Refunds</b>" in html  # agents involved
    assert "Handoff assistant → refunds" in html and "wants money back" in html
    assert html.count("LLM call #") == 3
    assert "How long does a refund take?" in html  # the messages sent to the model
    assert "System prompt" in html
    assert "Tool faq_lookup" in html and "refund time" in html  # arguments
    assert "Refunds reach your card within 5 business days." in html  # tool result
    assert "321 / 9" in html  # tokens of the last call
    assert "Credits: <b>1</b>" in html
    assert " ms" in html  # latency per span


def test_debug_log_of_a_handoff_shows_the_reason_and_no_charge(admin_client, team, ai):
    ai["llm"].push(tool_call("handoff_to_human", {"reason": "customer is angry", "priority": "high"}))
    conversation, message = customer_says(team, "This is unacceptable, get me a manager")
    assert run_for_message(message_id=message.id) == "human_handoff"
    html = admin_client.get(runs_url(team, conversation)).content.decode()
    assert "outcome-human_handoff" in html and "customer is angry" in html
    assert "Tool handoff_to_human" in html and "ends the run with: <b>human_handoff</b>" in html
    assert "Credits: <b>none charged</b>" in html


def test_debug_log_links_from_messages_narrow_to_their_run(admin_client, team, ai):
    ai["llm"].push(text("First answer"), text("Second answer"))
    conversation, first = customer_says(team, "one")
    run_for_message(message_id=first.id)
    _, second = customer_says(team, "two", conversation=conversation)
    run_for_message(message_id=second.id)
    reply = conversation.messages.get(content="Second answer")
    thread = admin_client.get(
        f"/app/accounts/{team.account.id}/conversations/{conversation.id}/"
    ).content.decode()
    assert f"runs/?message={reply.id}" in thread
    html = admin_client.get(runs_url(team, conversation) + f"?message={reply.id}").content.decode()
    assert html.count('class="run"') == 1
    assert "was sent:</span> Second answer" in html and "was sent:</span> First answer" not in html


def test_debug_log_escapes_model_and_customer_text(admin_client, team, ai):
    ai["llm"].push(text(XSS))
    conversation, message = customer_says(team, XSS)
    run_for_message(message_id=message.id)
    html = admin_client.get(runs_url(team, conversation)).content.decode()
    assert "<script>window.__xss" not in html and "<img src=x" not in html
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in html


def test_debug_log_queries_do_not_grow_with_runs_and_spans(
    admin_client, team, ai, django_assert_max_num_queries
):
    conversation, message = customer_says(team, "first")
    ai["llm"].push(text("ok"))
    run_for_message(message_id=message.id)
    admin_client.get(runs_url(team, conversation))
    small, _ = count_queries(lambda: admin_client.get(runs_url(team, conversation)))
    for i in range(6):
        ai["llm"].push(tool_call("faq_lookup", {"query": f"q{i}"}), text(f"answer {i}"))
        _, message = customer_says(team, f"question {i}", conversation=conversation)
        run_for_message(message_id=message.id)
    with django_assert_max_num_queries(MAX_DEBUG_LOG_QUERIES):
        large, response = count_queries(lambda: admin_client.get(runs_url(team, conversation)))
    assert response.content.decode().count('class="run"') == 7
    assert small == large <= MAX_DEBUG_LOG_QUERIES


# ---- playground --------------------------------------------------------------------------------------------


def playground_url(team) -> str:
    return f"/app/accounts/{team.account.id}/playground/"


@pytest.fixture
def play(admin_client, team, django_capture_on_commit_callbacks):
    """Send a playground message, run the task it enqueued as the worker would, and return the page after."""
    from captain.playground.services.playground import playground_turn_run

    def send(data: dict) -> str:
        with django_capture_on_commit_callbacks() as callbacks:
            response = admin_client.post(playground_url(team), data)
        assert response.status_code == 302
        queued = list(PlaygroundRun.objects.filter(status=PlaygroundRun.Status.QUEUED))
        assert (
            len(not_realtime(callbacks)) == len(queued) == 1
        )  # one task per message, enqueued once the row is committed
        page = admin_client.get(response["Location"]).content.decode()
        assert "Waiting for a worker" in page and 'http-equiv="refresh"' in page
        playground_turn_run(run_id=queued[0].pk)
        return admin_client.get(response["Location"]).content.decode()

    return send


def test_playground_round_trip_charges_nothing_and_creates_no_conversation(admin_client, team, ai, play):
    ai["llm"].push(
        tool_call("handoff_to_refunds", {"reason": "refund"}),
        tool_call("add_label", {"label": "refund"}),
        text("Your refund is on its way."),
    )
    ai["assistant"].scenarios.filter(key="refunds").update(tools=["faq_lookup", "add_label"])
    Label.objects.create(account=team.account, name="refund")  # the AI may use the team's labels only
    before = (Conversation.objects.count(), Message.objects.count(), Run.objects.count())
    html = play(
        {"assistant": ai["assistant"].id, "start_key": "assistant", "message": "I want my money back"}
    )
    assert "Your refund is on its way." in html
    assert 'http-equiv="refresh"' not in html
    assert "route assistant → refunds" in html
    assert "Tool add_label" in html and "Label &#x27;refund&#x27; added." in html  # described, not done
    assert "Credits: <b>none (playground)</b>" in html
    assert (Conversation.objects.count(), Message.objects.count(), Run.objects.count()) == before
    assert CreditLedgerEntry.objects.count() == 0
    assert CreditBalance.objects.filter(account=team.account, used__gt=0).count() == 0
    (run_span,) = [
        s for s in SpanRecord.objects.filter(name="captain.run") if s.attributes.get("captain.playground")
    ]
    assert run_span.attributes["captain.credit_used"] is False
    assert "captain.conversation.id" not in run_span.attributes

    # The next message continues with the specialist that answered (sticky, like a real conversation).
    ai["llm"].push(text("Anything else?"))
    play({"assistant": ai["assistant"].id, "start_key": "assistant", "message": "thanks"})
    last_request = ai["llm"].requests[-1]
    assert "Refunds" in last_request["messages"][0]["content"]
    assert [m["content"] for m in last_request["messages"] if m["role"] != "system"] == [
        "I want my money back",
        "Your refund is on its way.",
        "thanks",
    ]


def test_playground_can_start_at_a_scenario(admin_client, team, ai, play):
    ai["llm"].push(text("Refund desk here."))
    play({"assistant": ai["assistant"].id, "start_key": "refunds", "message": "hello"})
    offered = [t["function"]["name"] for t in ai["llm"].requests[0]["tools"]]
    assert "handoff_to_assistant" in offered  # the refunds specialist answered first, not triage
    html = admin_client.get(
        playground_url(team) + f"?assistant={ai['assistant'].id}&start=refunds"
    ).content.decode()
    assert "Refund desk here." in html


def test_playground_handoff_shows_the_reason_and_reset_clears(admin_client, team, ai, play):
    ai["llm"].push(tool_call("handoff_to_human", {"reason": "needs a manager"}))
    html = play({"assistant": ai["assistant"].id, "start_key": "assistant", "message": "manager now"})
    assert "A teammate will take it from here." in html and "needs a manager" in html
    assert Conversation.objects.count() == 0
    html = admin_client.post(playground_url(team), {"reset": "1"}, follow=True).content.decode()
    assert "manager now" not in html


def test_playground_refuses_another_accounts_assistant(admin_client, team, other_team, ai):
    foreign = AssistantInboxFactory(assistant__account=other_team.account, inbox=other_team.inbox).assistant
    response = admin_client.post(
        playground_url(team), {"assistant": foreign.id, "start_key": "assistant", "message": "hi"}
    )
    assert response.status_code == 404
    assert ai["llm"].requests == []
    assert PlaygroundRun.objects.count() == 0


def test_playground_debug_log_reads_only_this_sessions_traces(admin_client, team, ai, play):
    ai["llm"].push(text("mine"))
    play({"assistant": ai["assistant"].id, "start_key": "assistant", "message": "x"})
    html = admin_client.get(playground_url(team) + "?turn=999").content.decode()
    assert "mine" in html  # an unknown turn falls back to the latest of this session, never to any trace


# ---- usage -------------------------------------------------------------------------------------------------


def test_usage_shows_balance_credits_per_day_assistant_scenario_and_rates(admin_client, team, ai):
    assistant = ai["assistant"]
    CreditBalance.objects.update_or_create(account=team.account, defaults={"limit": 100, "used": 3})
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox)
    for agent_key in ("refunds", "refunds", "assistant"):
        CreditLedgerEntryFactory(
            message__conversation=conversation, assistant=assistant, agent_key=agent_key, amount=1
        )
    old = CreditLedgerEntryFactory(message__conversation=conversation, assistant=assistant, amount=5)
    type(old).objects.filter(pk=old.pk).update(created_at=timezone.now() - dt.timedelta(days=3))
    # 4 conversations: one handed to people, one resolved by the AI, two only answered.
    for outcomes in (["reply", "human_handoff"], ["reply", "resolve"], ["reply"], ["reply", "skipped"]):
        c = ConversationFactory(contact_inbox__inbox=team.inbox)
        for outcome in outcomes:
            RunFactory(conversation=c, assistant=assistant, outcome=outcome)

    html = admin_client.get(f"/app/accounts/{team.account.id}/usage/").content.decode()
    assert '<div class="big" id="remaining">97</div>' in html
    assert len(re.findall(r'<rect class="bar"', html)) == 30
    assert ": 3 credits</title>" in html and ": 5 credits</title>" in html
    assert "<td>Captain</td><td>8</td>" in html
    assert '<td>Refunds</td><td class="muted">refunds</td><td>2</td>' in html
    assert '<td>Triage assistant</td><td class="muted">assistant</td><td>6</td>' in html
    rates = re.search(r'<table class="data" id="rates">.*?</table>', html, re.S).group(0)
    cells = re.findall(r"<td>([^<]*)</td>", rates)
    assert cells == ["Captain", "4", "6", "1", "25%", "1", "25%"]
