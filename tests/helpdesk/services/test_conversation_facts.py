"""The facts reports are built on, written by the services that change a conversation: first response,
escalation, resolution (when and by whom), and snooze."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from helpdesk.models import Conversation, Message
from helpdesk.services.conversations import conversation_escalate, conversation_set_status
from helpdesk.services.messages import (
    message_create_agent_reply,
    message_create_ai_reply,
    message_create_note,
)
from tests.factories import ConversationFactory, MembershipFactory

pytestmark = pytest.mark.django_db


def test_the_first_public_answer_is_the_first_response_and_later_ones_do_not_move_it() -> None:
    conversation = ConversationFactory()
    message_create_note(conversation=conversation, content="looking", user=None)
    conversation.refresh_from_db()
    assert conversation.first_reply_at is None  # a note answers nobody

    message_create_ai_reply(conversation=conversation, content="Hi!", agent_key="assistant", agent_name="AI")
    conversation.refresh_from_db()
    first = conversation.first_reply_at
    assert first is not None

    agent = MembershipFactory(account=conversation.account).user
    message_create_agent_reply(conversation=conversation, user=agent, content="Me again")
    conversation.refresh_from_db()
    assert conversation.first_reply_at == first


def test_the_handoff_notice_is_not_a_first_response_but_escalation_is_recorded_once() -> None:
    conversation = ConversationFactory()
    conversation_escalate(
        conversation=conversation,
        reason="The customer asked for a person",
        customer_message="A person will reply.",
    )
    conversation.refresh_from_db()
    assert conversation.first_reply_at is None
    assert conversation.status == Conversation.Status.OPEN
    first_escalation = conversation.escalated_at
    assert first_escalation is not None
    # The notice itself was sent.
    assert conversation.messages.filter(message_type=Message.Type.OUTGOING, private=False).count() == 1

    conversation_set_status(conversation=conversation, status=Conversation.Status.PENDING, actor="The AI")
    conversation_escalate(conversation=conversation, reason="Again", customer_message="")
    conversation.refresh_from_db()
    assert conversation.escalated_at == first_escalation


def test_resolution_records_when_and_by_whom_and_reopening_clears_it() -> None:
    conversation = ConversationFactory(status=Conversation.Status.OPEN)
    agent = MembershipFactory(account=conversation.account).user
    conversation_set_status(conversation=conversation, status=Conversation.Status.RESOLVED, actor=agent)
    conversation.refresh_from_db()
    assert conversation.resolved_by == Conversation.ResolvedBy.AGENT
    assert conversation.resolved_at is not None

    conversation_set_status(conversation=conversation, status=Conversation.Status.OPEN, actor=agent)
    conversation.refresh_from_db()
    assert (conversation.resolved_at, conversation.resolved_by) == (None, "")

    conversation_set_status(conversation=conversation, status=Conversation.Status.RESOLVED, actor="The AI")
    conversation.refresh_from_db()
    assert conversation.resolved_by == Conversation.ResolvedBy.AI

    other = ConversationFactory(status=Conversation.Status.OPEN)
    conversation_set_status(
        conversation=other,
        status=Conversation.Status.RESOLVED,
        actor="Auto-resolve",
        resolved_by=Conversation.ResolvedBy.INACTIVITY,
    )
    other.refresh_from_db()
    assert other.resolved_by == Conversation.ResolvedBy.INACTIVITY


def test_snoozing_needs_a_wake_up_time_and_any_other_status_clears_it() -> None:
    conversation = ConversationFactory(status=Conversation.Status.OPEN)
    with pytest.raises(ValueError, match="wake-up time"):
        conversation_set_status(conversation=conversation, status=Conversation.Status.SNOOZED, actor="x")
    until = timezone.now() + timedelta(hours=2)
    conversation_set_status(
        conversation=conversation, status=Conversation.Status.SNOOZED, actor="x", snoozed_until=until
    )
    conversation.refresh_from_db()
    assert (conversation.status, conversation.snoozed_until) == (Conversation.Status.SNOOZED, until)
    assert "snoozed the conversation until" in conversation.messages.last().content

    conversation_set_status(conversation=conversation, status=Conversation.Status.OPEN, actor="x")
    conversation.refresh_from_db()
    assert conversation.snoozed_until is None
