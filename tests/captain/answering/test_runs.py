"""The AI run service with the real `openai` SDK over HTTP against the scripted model server, and a real Redis
for the conversation lock. Celery is not involved here: `run_for_message` is what the task calls."""

from __future__ import annotations

import pytest
from opentelemetry import trace

from captain.answering.models import CreditBalance, CreditLedgerEntry, ReplyJob, Run, SpanRecord
from captain.answering.services.locks import conversation_lock
from captain.answering.services.runs import ConversationBusy, run_for_message
from helpdesk.models import Conversation, Delivery, Message
from tests.factories import (
    AssistantInboxFactory,
    ConversationFactory,
    CreditBalanceFactory,
    FaqEntryFactory,
    MessageFactory,
    ScenarioFactory,
)
from tests.support.fake_llm_server import error, text, tool_call, tool_calls
from tests.support.on_commit import not_realtime

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def setup(redis_url, llm_settings):
    link = AssistantInboxFactory()
    assistant = link.assistant
    refunds = ScenarioFactory(
        assistant=assistant,
        title="Refunds",
        key="refunds",
        description="Refund requests",
        tools=["faq_lookup"],
    )
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox)
    message = MessageFactory(
        conversation=conversation, content="I want my money back", reply_job=ReplyJob.Status.PENDING
    )
    return {"assistant": assistant, "refunds": refunds, "conversation": conversation, "message": message}


def outgoing(conversation) -> list[Message]:
    return list(conversation.messages.filter(message_type=Message.Type.OUTGOING, private=False))


def test_reply_is_stored_charged_once_and_recorded(setup, llm_settings, django_capture_on_commit_callbacks):
    llm_settings.push(text("Happy to help!"))
    with django_capture_on_commit_callbacks() as callbacks:
        assert run_for_message(message_id=setup["message"].id) == "reply"
    reply = outgoing(setup["conversation"])
    assert [m.content for m in reply] == ["Happy to help!"]
    assert reply[0].ai_agent_key == "assistant"
    assert Delivery.objects.get(message=reply[0]).status == Delivery.Status.QUEUED
    assert CreditLedgerEntry.objects.filter(message=reply[0]).count() == 1
    assert CreditBalance.objects.get(account=setup["conversation"].account).used == 1
    run = Run.objects.get()
    assert run.credit_used is True and run.outcome == "reply"
    assert len(not_realtime(callbacks)) == 1  # the delivery task, queued on commit
    assert ReplyJob.objects.get(pk=setup["message"].pk).status == ReplyJob.Status.DONE


def test_running_twice_for_the_same_message_does_nothing_the_second_time(setup, llm_settings):
    llm_settings.push(text("Happy to help!"))
    run_for_message(message_id=setup["message"].id)
    assert run_for_message(message_id=setup["message"].id) == "already_handled"
    assert len(outgoing(setup["conversation"])) == 1
    assert CreditLedgerEntry.objects.count() == 1
    assert len(llm_settings.requests) == 1


def test_specialist_handoff_answers_and_stays_in_charge(setup, llm_settings):
    llm_settings.push(tool_call("handoff_to_refunds", {"reason": "refund"}), text("Refund started."))
    assert run_for_message(message_id=setup["message"].id) == "reply"
    reply = outgoing(setup["conversation"])[0]
    assert reply.ai_agent_key == "refunds" and reply.ai_agent_name == "Refunds"
    setup["conversation"].refresh_from_db()
    assert setup["conversation"].ai_agent_key == "refunds"
    run = Run.objects.get()
    assert run.route == ["assistant", "refunds"]
    # The specialist's request offered its own tools and the way back, not other specialists.
    offered = [t["function"]["name"] for t in llm_settings.requests[1]["tools"]]
    assert "handoff_to_assistant" in offered and "handoff_to_refunds" not in offered

    # The next customer message starts with the specialist that wrote the last reply.
    nxt = MessageFactory(
        conversation=setup["conversation"], content="Thanks", reply_job=ReplyJob.Status.PENDING
    )
    llm_settings.push(text("You're welcome."))
    run_for_message(message_id=nxt.id)
    assert "Refunds" in llm_settings.requests[2]["messages"][0]["content"]


def test_human_handoff_tool_escalates_without_charge(setup, llm_settings):
    llm_settings.push(tool_call("handoff_to_human", {"reason": "angry customer", "priority": "high"}))
    assert run_for_message(message_id=setup["message"].id) == "human_handoff"
    conversation = Conversation.objects.get(pk=setup["conversation"].pk)
    assert conversation.status == Conversation.Status.OPEN
    assert conversation.priority == "high"
    assert conversation.escalation_reason == "angry customer"
    assert conversation.waiting_since is not None
    notes = conversation.messages.filter(private=True)
    assert [n.content for n in notes] == ["Handoff reason: angry customer"]
    assert [m.content for m in outgoing(conversation)] == ["A teammate will take it from here."]
    assert CreditLedgerEntry.objects.count() == 0
    assert Run.objects.get().credit_used is False


@pytest.mark.parametrize("failure", [error(500), error(503), error(429, retry_after=0)])
def test_model_outage_ends_in_free_human_handoff(setup, llm_settings, failure):
    llm_settings.push(failure)
    assert run_for_message(message_id=setup["message"].id) == "error"
    conversation = Conversation.objects.get(pk=setup["conversation"].pk)
    assert conversation.status == Conversation.Status.OPEN
    assert [m.content for m in outgoing(conversation)] == ["A teammate will take it from here."]
    assert CreditLedgerEntry.objects.count() == 0


def test_max_turns_ends_in_handoff(setup, llm_settings):
    setup["assistant"].max_turns = 2
    setup["assistant"].save()
    llm_settings.push(
        tool_call("faq_lookup", {"query": "a"}),
        tool_call("faq_lookup", {"query": "b"}),
        text("never reached"),
    )
    assert run_for_message(message_id=setup["message"].id) == "error"
    assert Run.objects.get().detail.startswith("The AI did not finish")
    assert CreditLedgerEntry.objects.count() == 0


def test_faq_lookup_returns_the_matching_entry_as_a_numbered_source(setup, llm_settings):
    # Tool-only knowledge: nothing is injected, the model searches (the search tool of every mode).
    setup["assistant"].knowledge_mode = "tool"
    setup["assistant"].save()
    FaqEntryFactory(
        assistant=setup["assistant"], question="How long does a refund take?", answer="5 business days."
    )
    llm_settings.push(tool_call("faq_lookup", {"query": "how long until I get my refund"}), text("5 days."))
    run_for_message(message_id=setup["message"].id)
    tool_result = next(m for m in llm_settings.requests[1]["messages"] if m["role"] == "tool")["content"]
    assert "[1] Q: How long does a refund take?\nA: 5 business days." in tool_result
    assert "## Sources" not in llm_settings.requests[0]["messages"][0]["content"]
    # The reply's "5" is in the source the tool returned: grounded, and that source is cited.
    run = Run.objects.get()
    assert run.outcome == "reply"
    assert [s["cited"] for s in run.sources] == [True]


def test_several_handoffs_first_wins(setup, llm_settings):
    ScenarioFactory(assistant=setup["assistant"], title="Shipping", key="shipping", description="Shipping")
    llm_settings.push(
        tool_calls([("handoff_to_shipping", {}), ("handoff_to_refunds", {})]),
        text("Shipping here."),
    )
    run_for_message(message_id=setup["message"].id)
    assert Run.objects.get().route == ["assistant", "shipping"]


def test_credit_limit_reached_hands_to_people_without_model_call(setup, llm_settings):
    CreditBalanceFactory(account=setup["conversation"].account, limit=1, used=1)
    assert run_for_message(message_id=setup["message"].id) == "human_handoff"
    assert llm_settings.requests == []
    assert Conversation.objects.get(pk=setup["conversation"].pk).status == Conversation.Status.OPEN
    assert CreditLedgerEntry.objects.count() == 0


def test_conversation_taken_over_by_people_is_skipped(setup, llm_settings):
    Conversation.objects.filter(pk=setup["conversation"].pk).update(status=Conversation.Status.OPEN)
    assert run_for_message(message_id=setup["message"].id) == "skipped"
    assert llm_settings.requests == []
    assert outgoing(setup["conversation"]) == []


def test_busy_conversation_raises_for_retry(setup):
    lock = conversation_lock(setup["conversation"].id)
    assert lock.acquire()
    try:
        with pytest.raises(ConversationBusy):
            run_for_message(message_id=setup["message"].id)
    finally:
        lock.release()


def test_attempts_exhausted_ends_in_handoff(setup, llm_settings, settings):
    ReplyJob.objects.filter(pk=setup["message"].pk).update(attempts=3)
    assert run_for_message(message_id=setup["message"].id) == "error"
    assert llm_settings.requests == []
    assert Run.objects.get().detail.startswith("The AI failed on this message several times")


def test_burst_of_messages_gets_one_answer(setup, llm_settings):
    second = MessageFactory(
        conversation=setup["conversation"], content="Order 42", reply_job=ReplyJob.Status.PENDING
    )
    llm_settings.push(text("Refund for order 42 started."))
    run_for_message(message_id=setup["message"].id)
    assert run_for_message(message_id=second.id) == "already_handled"
    sent_users = [m["content"] for m in llm_settings.requests[0]["messages"] if m["role"] == "user"]
    assert sent_users[-2:] == ["I want my money back", "Order 42"]
    assert len(outgoing(setup["conversation"])) == 1


def test_run_span_carries_credit_and_tokens(setup, llm_settings):
    llm_settings.push(text("Happy to help!", prompt_tokens=120, completion_tokens=7))
    run_for_message(message_id=setup["message"].id)
    provider = trace.get_tracer_provider()
    provider.force_flush()
    run = Run.objects.get()
    span = SpanRecord.objects.get(trace_id=run.trace_id, name="captain.run")
    assert span.attributes["captain.credit_used"] is True
    assert span.attributes["captain.usage.input_tokens"] == 120
    assert span.attributes["captain.usage.output_tokens"] == 7
    llm = SpanRecord.objects.get(trace_id=run.trace_id, name="gen_ai.chat")
    assert llm.attributes["gen_ai.usage.input_tokens"] == 120


def test_person_replying_during_the_run_wins_and_the_ai_reply_is_dropped(setup, llm_settings, monkeypatch):
    from captain.answering.services import runs
    from helpdesk.services.messages import message_create_agent_reply
    from tests.factories import UserFactory

    original = runs._run_team

    def person_replies_meanwhile(conversation, *args):
        result = original(conversation, *args)
        message_create_agent_reply(conversation=conversation, user=UserFactory(), content="I'm on it.")
        return result

    monkeypatch.setattr(runs, "_run_team", person_replies_meanwhile)
    llm_settings.push(text("AI answer that must not be sent"))
    assert run_for_message(message_id=setup["message"].id) == "skipped"
    contents = [m.content for m in outgoing(setup["conversation"])]
    assert contents == ["I'm on it."]
    assert CreditLedgerEntry.objects.count() == 0
