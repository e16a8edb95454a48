"""captain's job table (captain/answering/services/jobs.py): one row per customer message the AI must answer, written with
the message, counted per attempt, finished by the outcome, and claimed by the sweeper once per period."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from captain.answering.models import ReplyJob
from captain.answering.services.jobs import (
    job_claim_attempt,
    job_pending_message_ids,
    job_pending_span,
    jobs_claim_stale,
    jobs_finish,
    jobs_unclaim,
)
from helpdesk.channels.base import InboundContact, InboundMessage
from helpdesk.models import Conversation, Message
from helpdesk.services.messages import message_ingest
from tests.factories import AssistantInboxFactory, ConversationFactory, InboxFactory, MessageFactory

pytestmark = pytest.mark.django_db


def inbound(provider_id: str, text: str = "Where is my parcel?") -> InboundMessage:
    return InboundMessage(provider_id, InboundContact(source_id="ann", name="Ann"), text)


def test_a_message_for_the_ai_is_stored_with_its_pending_job():
    link = AssistantInboxFactory()

    with transaction.atomic():  # what the webhook view does; the publish waits for the commit
        message = message_ingest(inbox=link.inbox, inbound=inbound("m-1")).message

    job = ReplyJob.objects.get(pk=message.pk)
    assert job.status == ReplyJob.Status.PENDING and job.attempts == 0 and job.enqueued_at is None
    assert (job.conversation_id, job.account_id, job.created_at) == (
        message.conversation_id,
        message.account_id,
        message.created_at,
    )


def test_a_rolled_back_ingest_leaves_neither_the_message_nor_its_job():
    link = AssistantInboxFactory()

    with pytest.raises(RuntimeError), transaction.atomic():
        message_ingest(inbox=link.inbox, inbound=inbound("m-1"))
        raise RuntimeError("the request failed after the insert")

    assert not Message.objects.exists()
    assert not ReplyJob.objects.exists()


def test_a_message_people_handle_gets_no_job():
    inbox = InboxFactory()  # no assistant linked: the AI is not in charge

    message = message_ingest(inbox=inbox, inbound=inbound("m-1")).message

    assert message.conversation.status == Conversation.Status.OPEN
    assert not ReplyJob.objects.exists()


def test_the_attempt_counter_counts_pending_jobs_only():
    message = MessageFactory(reply_job=ReplyJob.Status.PENDING)

    assert [job_claim_attempt(message_id=message.pk) for _ in range(3)] == [1, 2, 3]
    jobs_finish(message_ids=[message.pk], status=ReplyJob.Status.DONE)
    assert job_claim_attempt(message_id=message.pk) is None
    assert ReplyJob.objects.get(pk=message.pk).attempts == 3


def test_pending_ids_are_the_conversations_waiting_messages_oldest_first():
    conversation = ConversationFactory()
    first = MessageFactory(conversation=conversation, reply_job=ReplyJob.Status.PENDING)
    answered = MessageFactory(conversation=conversation, reply_job=ReplyJob.Status.DONE)
    second = MessageFactory(conversation=conversation, reply_job=ReplyJob.Status.PENDING)
    MessageFactory(reply_job=ReplyJob.Status.PENDING)  # another conversation's

    assert job_pending_message_ids(conversation_id=conversation.pk) == [first.pk, second.pk]
    assert job_pending_span(conversation_id=conversation.pk) == (first.created_at, second.created_at)
    assert answered.pk not in job_pending_message_ids(conversation_id=conversation.pk)


def test_finishing_needs_a_final_status():
    with pytest.raises(ValueError):
        jobs_finish(message_ids=[1], status=ReplyJob.Status.PENDING)


def test_the_sweeper_claims_a_stale_job_once_and_can_give_it_back():
    now = timezone.now()
    unpublished = MessageFactory(reply_job=ReplyJob.Status.PENDING)
    fresh = MessageFactory(reply_job=ReplyJob.Status.PENDING)
    lost = MessageFactory(reply_job=ReplyJob.Status.PENDING)
    done = MessageFactory(reply_job=ReplyJob.Status.DONE)
    ReplyJob.objects.filter(pk__in=[unpublished.pk, done.pk]).update(created_at=now - timedelta(minutes=5))
    ReplyJob.objects.filter(pk=lost.pk).update(
        created_at=now - timedelta(hours=1), enqueued_at=now - timedelta(hours=1)
    )
    ReplyJob.objects.filter(pk=fresh.pk).update(enqueued_at=now)
    window = {
        "unpublished_before": now - timedelta(seconds=10),
        "enqueued_before": now - timedelta(minutes=30),
    }

    claimed = jobs_claim_stale(now=now, limit=10, **window)
    assert claimed == [lost.pk, unpublished.pk]  # oldest first
    assert jobs_claim_stale(now=now, limit=10, **window) == []  # claimed: not again in this period

    jobs_unclaim(message_ids=claimed, claimed_at=now)  # the broker refused the publish
    assert jobs_claim_stale(now=now, limit=10, **window) == claimed
