"""Escalation reasons in plain language: agents read what happened ("The customer asked for a person"), the
router's maths stays in the run's debug log (Run.detail), and reasons already written for people pass through."""

from __future__ import annotations

import pytest

from captain.answering.models import ReplyJob, Run
from captain.answering.services.handoff_reasons import (
    ASKED_FOR_PERSON,
    NOT_IN_KNOWLEDGE,
    ROUTED_TO_PEOPLE,
    ROUTING_RULE,
    plain_handoff_reason,
)
from captain.answering.services.outcomes import outcome_apply
from captain.runtime import HumanHandoff
from tests.factories import AssistantInboxFactory, ConversationFactory, MessageFactory

SEMANTIC = (
    "The router handed the conversation to people (asks for a person (0.81, +0.22 over other requests); "
    "A or B?: log P(B)=-1.10 + 0.6 > log P(A)=-2.30 (refunds))."
)


@pytest.mark.parametrize(
    ("raw", "plain"),
    [
        (SEMANTIC, ASKED_FOR_PERSON),
        ("The router handed the conversation to people (rule 2: keyword 'agent').", ROUTING_RULE),
        ("The router handed the conversation to people (router chose human).", ROUTED_TO_PEOPLE),
        ("Nothing in the knowledge answers the question.", NOT_IN_KNOWLEDGE),
        (
            "The AI's reply stated '59 EUR', which no source supports (grounding check).",
            "The AI's answer stated things the knowledge does not support, so it was not sent ('59 EUR').",
        ),
        # A model's label instead of a sentence: what it means.
        ("customer request", ASKED_FOR_PERSON),
        ("Customer requested human", ASKED_FOR_PERSON),
        ("user_requested_human", ASKED_FOR_PERSON),
        ("Escalation.", ASKED_FOR_PERSON),
        ("the user wants a human", ASKED_FOR_PERSON),
        # Written for people already: the agent's own handoff reason, credits, configuration.
        ("Customer wants to cancel the contract", "Customer wants to cancel the contract"),
        ("The account's AI credit limit is reached.", "The account's AI credit limit is reached."),
    ],
)
def test_plain_reason(raw, plain):
    assert plain_handoff_reason(raw) == plain


def test_no_router_maths_reaches_agents():
    for raw in (SEMANTIC, "The router handed the conversation to people (continue? P(yes)=0.20 < x)."):
        plain = plain_handoff_reason(raw)
        assert "log P" not in plain and "P(yes)" not in plain and "(0." not in plain


@pytest.mark.django_db
def test_handoff_outcome_escalates_with_the_plain_reason_and_keeps_the_details_in_the_run():
    link = AssistantInboxFactory()
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox)
    message = MessageFactory(conversation=conversation, reply_job=ReplyJob.Status.PENDING)

    applied = outcome_apply(
        conversation_id=conversation.id,
        assistant=link.assistant,
        outcome=HumanHandoff(reason=SEMANTIC),
        result=None,
        agent_names={},
        trigger_message_ids=[message.id],
        trace_id="0" * 32,
        duration_ms=5,
    )

    conversation.refresh_from_db()
    assert applied.run.outcome == Run.Outcome.HUMAN_HANDOFF
    assert conversation.escalation_reason == ASKED_FOR_PERSON
    note = conversation.messages.get(private=True)
    assert note.content == f"Handoff reason: {ASKED_FOR_PERSON}"
    assert applied.run.detail == SEMANTIC  # the debug log keeps the router's details
