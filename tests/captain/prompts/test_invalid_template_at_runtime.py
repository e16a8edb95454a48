"""A template stored before the static check existed (or written straight to the database) that fails at run
time ends in a free human handoff whose reason names the template and the problem, not in "internal error".

Through the real run service: real Redis for the conversation lock, the scripted model server on 127.0.0.1."""

from __future__ import annotations

import pytest

from captain.answering.models import CreditLedgerEntry, ReplyJob, Run
from captain.answering.services.runs import run_for_message
from captain.routing.services.routing import routing_enable_default
from helpdesk.models import Conversation, Message
from tests.factories import AssistantInboxFactory, ConversationFactory, MessageFactory, ScenarioFactory

pytestmark = [pytest.mark.django_db]

BROKEN = "{% if contact.name == 'x' %}ok{% else %}{{ contact.missing }}{% endif %}"
PROBLEM = (
    "unknown variable 'contact.missing'; available: contact.name, assistant.name, assistant.product_name"
)


def pending_message(link):
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox, contact_inbox__contact__name="Ann")
    return MessageFactory(conversation=conversation, content="Refund?", reply_job=ReplyJob.Status.PENDING)


@pytest.mark.parametrize("routed", [False, True], ids=["star", "routing_graph"])
def test_broken_scenario_instruction_hands_over_with_the_reason(redis_url, llm_settings, routed):
    link = AssistantInboxFactory()
    # Factories write the row directly, as data saved before the check existed would be.
    ScenarioFactory(assistant=link.assistant, title="Refunds", key="refunds", instruction=BROKEN)
    if routed:
        routing_enable_default(assistant=link.assistant)
    message = pending_message(link)

    assert run_for_message(message_id=message.id) == "human_handoff"

    reason = f"the scenario 'Refunds' instruction template is invalid: {PROBLEM}"
    run = Run.objects.get()
    assert run.detail == reason and run.credit_used is False
    conversation = Conversation.objects.get(pk=message.conversation_id)
    assert conversation.status == Conversation.Status.OPEN
    assert conversation.escalation_reason == reason
    notes = [m.content for m in conversation.messages.filter(private=True)]
    assert notes == [f"Handoff reason: {reason}"]
    outgoing = conversation.messages.filter(message_type=Message.Type.OUTGOING, private=False)
    assert [m.content for m in outgoing] == [link.assistant.handoff_message]
    assert CreditLedgerEntry.objects.count() == 0
    assert llm_settings.requests == []  # the team could not be built: no model was asked anything


def test_broken_assistant_instructions_name_the_assistant(redis_url, llm_settings):
    link = AssistantInboxFactory(
        assistant__name="Captain", assistant__instructions="Hi {{ contact.name.format }}"
    )
    message = pending_message(link)

    assert run_for_message(message_id=message.id) == "human_handoff"

    assert Run.objects.get().detail == (
        "the assistant 'Captain' instructions template is invalid: unknown variable 'contact.name.format': "
        "contact.name is a string and has no attribute 'format'; "
        "available: contact.name, assistant.name, assistant.product_name"
    )
