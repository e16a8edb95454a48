"""Applying an outcome is fenced: when two runs overlap on the same messages (the conversation lock lapsed under
the first one), only the first to commit answers and charges; the second is recorded as skipped."""

from __future__ import annotations

import pytest

from captain.answering.models import CreditLedgerEntry, ReplyJob, Run
from captain.answering.services.outcomes import outcome_apply
from captain.runtime import Reply, RunError
from helpdesk.models import Message
from tests.factories import AssistantInboxFactory, ConversationFactory, CreditBalanceFactory, MessageFactory

pytestmark = [pytest.mark.django_db]


def apply_reply(conversation, assistant, trigger_ids, text):
    return outcome_apply(
        conversation_id=conversation.id,
        assistant=assistant,
        outcome=Reply(text=text),
        result=None,
        agent_names={},
        trigger_message_ids=trigger_ids,
        trace_id="0" * 32,
        duration_ms=5,
    )


def test_second_run_on_answered_messages_is_skipped_without_reply_or_charge():
    link = AssistantInboxFactory()
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox)
    CreditBalanceFactory(account=conversation.account)
    message = MessageFactory(conversation=conversation, reply_job=ReplyJob.Status.PENDING)

    first = apply_reply(conversation, link.assistant, [message.id], "first answer")
    second = apply_reply(conversation, link.assistant, [message.id], "second answer")

    assert first.run.outcome == Run.Outcome.REPLY and first.credit_used
    assert second.run.outcome == Run.Outcome.SKIPPED and not second.credit_used
    assert second.reply_message is None and "Another run" in second.run.detail
    replies = conversation.messages.filter(message_type=Message.Type.OUTGOING)
    assert list(replies.values_list("content", flat=True)) == ["first answer"]
    assert CreditLedgerEntry.objects.count() == 1


def test_a_message_that_arrived_meanwhile_still_gets_its_answer():
    """The overlapping run also carried a newer message nobody answered: that one is answered."""
    link = AssistantInboxFactory()
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox)
    CreditBalanceFactory(account=conversation.account)
    old = MessageFactory(conversation=conversation, reply_job=ReplyJob.Status.PENDING)
    apply_reply(conversation, link.assistant, [old.id], "answer to the first")
    new = MessageFactory(conversation=conversation, reply_job=ReplyJob.Status.PENDING)

    applied = apply_reply(conversation, link.assistant, [old.id, new.id], "answer to both")

    assert applied.run.outcome == Run.Outcome.REPLY
    assert ReplyJob.objects.get(pk=new.pk).status == ReplyJob.Status.DONE


@pytest.mark.parametrize(
    ("timeout", "retries", "reason"),
    [
        (180.0, 0, "The AI model timed out after 180 s."),
        (30.0, 1, "The AI model timed out after 30 s, 2 attempts."),
    ],
)
def test_a_model_timeout_is_reported_as_a_timeout_with_the_seconds_waited(settings, timeout, retries, reason):
    """A slow model is not an unreachable one: agents read which limit was hit and how long it was."""
    link = AssistantInboxFactory()
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox)
    message = MessageFactory(conversation=conversation, reply_job=ReplyJob.Status.PENDING)

    settings.CAPTAIN = {**settings.CAPTAIN, "LLM_TIMEOUT_SECONDS": timeout, "LLM_MAX_RETRIES": retries}

    applied = outcome_apply(
        conversation_id=conversation.id,
        assistant=link.assistant,
        outcome=RunError("model_timeout", "timeout: Request timed out."),
        result=None,
        agent_names={},
        trigger_message_ids=[message.id],
        trace_id="0" * 32,
        duration_ms=5,
    )

    conversation.refresh_from_db()
    assert applied.run.outcome == Run.Outcome.ERROR and not applied.credit_used
    assert conversation.escalation_reason == reason
    assert "could not be reached" not in applied.run.detail
