"""Inbox.after_resolution: a customer's message after resolution starts a new conversation (`new`) or reopens
their last one (`reopen`, Chatwoot's lock to a single conversation)."""

from __future__ import annotations

import pytest
from django.utils import timezone

from captain.answering.models import ReplyJob
from helpdesk.channels.base import InboundContact, InboundMessage
from helpdesk.models import Conversation, Inbox, Message
from helpdesk.services.messages import message_ingest
from tests.factories import AssistantInboxFactory, ContactInboxFactory, ConversationFactory, InboxFactory

pytestmark = pytest.mark.django_db


def resolved_conversation(inbox, contact_inbox=None, **fields):
    contact_inbox = contact_inbox or ContactInboxFactory(inbox=inbox)
    return ConversationFactory(
        contact_inbox=contact_inbox,
        status=Conversation.Status.RESOLVED,
        resolved_at=timezone.now(),
        resolved_by=Conversation.ResolvedBy.AGENT,
        **fields,
    )


def write(conversation, provider_id="again-1", text="It broke again"):
    inbound = InboundMessage(
        provider_message_id=provider_id,
        contact=InboundContact(source_id=conversation.contact_inbox.source_id),
        text=text,
    )
    return message_ingest(inbox=conversation.inbox, inbound=inbound).message


def test_new_policy_starts_a_new_conversation_and_leaves_the_resolved_one():
    inbox = InboxFactory(after_resolution=Inbox.AfterResolution.NEW)
    old = resolved_conversation(inbox)

    message = write(old)

    assert message.conversation_id != old.pk
    assert message.conversation.contact_inbox_id == old.contact_inbox_id
    assert message.conversation.status == Conversation.Status.OPEN  # no AI on this inbox
    old.refresh_from_db()
    assert old.status == Conversation.Status.RESOLVED
    assert old.resolved_by == Conversation.ResolvedBy.AGENT


def test_new_is_the_default_policy():
    assert InboxFactory().after_resolution == Inbox.AfterResolution.NEW


def test_reopen_policy_reopens_the_last_conversation_for_people():
    inbox = InboxFactory(after_resolution=Inbox.AfterResolution.REOPEN)
    older = resolved_conversation(inbox)
    last = resolved_conversation(inbox, contact_inbox=older.contact_inbox)

    message = write(last)

    assert message.conversation_id == last.pk
    assert Conversation.objects.filter(contact_inbox=last.contact_inbox).count() == 2  # nothing new
    last.refresh_from_db()
    assert last.status == Conversation.Status.OPEN
    assert last.resolved_at is None and last.resolved_by == ""
    assert last.waiting_since == message.created_at  # the customer now waits for people
    assert Message.objects.filter(
        conversation=last,
        message_type=Message.Type.ACTIVITY,
        content="The customer wrote again: the resolved conversation was reopened.",
    ).exists()
    older.refresh_from_db()
    assert older.status == Conversation.Status.RESOLVED


def test_reopen_policy_gives_the_conversation_back_to_the_ai_that_serves_the_inbox():
    link = AssistantInboxFactory(inbox__after_resolution=Inbox.AfterResolution.REOPEN)
    old = resolved_conversation(link.inbox, ai_agent_key="refunds")

    message = write(old)

    old.refresh_from_db()
    assert message.conversation_id == old.pk
    assert old.status == Conversation.Status.PENDING
    assert old.ai_agent_key == ""  # the AI starts over at triage
    assert old.waiting_since is None
    # The AI has the message to answer (its job commits with the message).
    assert ReplyJob.objects.filter(message=message, status=ReplyJob.Status.PENDING).exists()


def test_reopen_policy_with_an_unresolved_conversation_just_adds_to_it():
    inbox = InboxFactory(after_resolution=Inbox.AfterResolution.REOPEN)
    contact_inbox = ContactInboxFactory(inbox=inbox)
    resolved_conversation(inbox, contact_inbox=contact_inbox)
    current = ConversationFactory(contact_inbox=contact_inbox, status=Conversation.Status.OPEN)

    message = write(current)

    assert message.conversation_id == current.pk
    assert not Message.objects.filter(
        message_type=Message.Type.ACTIVITY, content__contains="reopened"
    ).exists()
