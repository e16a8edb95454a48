"""The AI's job table: one `ReplyJob` per customer message the AI must answer (captain.answering.models.ReplyJob).

Every read and write of a job's status, attempt counter and publish time goes through here: the responder
creates the job inside helpdesk's ingest transaction, the task counts attempts and debounces, the run takes the
conversation's pending batch, the outcome finishes it, and the sweeper re-enqueues jobs whose task was lost.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from django.db import transaction
from django.db.models import F, Max, Min, Q, QuerySet
from django.utils import timezone

from captain.answering.models import ReplyJob
from helpdesk.models import Message

Status = ReplyJob.Status


def job_create(*, message: Message) -> ReplyJob:
    """A pending job for a customer message, in the caller's transaction (the ingest's): the message and its job
    commit together or not at all. Its `created_at` is the message's, which debounce and the sweeper count from."""
    return ReplyJob.objects.create(
        message=message,
        conversation_id=message.conversation_id,
        account_id=message.account_id,
        status=Status.PENDING,
        created_at=message.created_at,
    )


def job_get(*, message_id: int) -> ReplyJob | None:
    """The message's job, or None for a message the AI was never asked to answer."""
    return ReplyJob.objects.filter(pk=message_id).first()


def job_pending(*, message_id: int) -> ReplyJob | None:
    """The message's job if the AI still has to answer it (what a redelivered task checks first)."""
    return ReplyJob.objects.filter(pk=message_id, status=Status.PENDING).first()


def job_mark_published(*, message_id: int) -> None:
    """Record the first successful publish of the job's task; a job without one is swept within seconds."""
    ReplyJob.objects.filter(pk=message_id, enqueued_at__isnull=True).update(enqueued_at=timezone.now())


def job_mark_requeued(*, message_id: int, published: bool) -> None:
    """A task put itself back on the queue (debounce, busy conversation or account): note when, so the sweeper
    leaves the job alone for a while; `published=False` (the broker refused) hands it to the sweeper at once."""
    ReplyJob.objects.filter(pk=message_id, status=Status.PENDING).update(
        enqueued_at=timezone.now() if published else None
    )


def job_claim_attempt(*, message_id: int) -> int | None:
    """Count this attempt in the database before any model call, so a message that kills its worker every time
    ends in a human handoff instead of looping forever. None when the job is no longer pending."""
    with transaction.atomic():
        updated = ReplyJob.objects.filter(pk=message_id, status=Status.PENDING).update(
            attempts=F("attempts") + 1
        )
        if not updated:
            return None
        return ReplyJob.objects.values_list("attempts", flat=True).get(pk=message_id)


def job_pending_message_ids(*, conversation_id: int) -> list[int]:
    """Ids of the conversation's customer messages still waiting for the AI, oldest first: a run's batch, and
    what the history leaves out when it is not in the batch."""
    return list(
        ReplyJob.objects.filter(conversation_id=conversation_id, status=Status.PENDING)
        .order_by("created_at", "pk")
        .values_list("pk", flat=True)
    )


def job_next_pending(*, message_id: int) -> int | None:
    """The oldest customer message of `message_id`'s conversation still waiting for the AI, or None: what arrived
    while a run for `message_id` held the conversation, and is answered next."""
    return (
        ReplyJob.objects.filter(
            conversation_id=ReplyJob.objects.filter(pk=message_id).values("conversation_id")[:1],
            status=Status.PENDING,
        )
        .order_by("created_at", "pk")
        .values_list("pk", flat=True)
        .first()
    )


def job_pending_span(*, conversation_id: int) -> tuple[datetime, datetime] | None:
    """When the conversation's oldest and newest pending customer messages were stored (debounce), or None."""
    span = ReplyJob.objects.filter(conversation_id=conversation_id, status=Status.PENDING).aggregate(
        first=Min("created_at"), last=Max("created_at")
    )
    if span["last"] is None:
        return None
    return span["first"], span["last"]


def jobs_any_pending(*, message_ids: Collection[int]) -> bool:
    return ReplyJob.objects.filter(pk__in=list(message_ids), status=Status.PENDING).exists()


def jobs_finish(*, message_ids: Collection[int], status: ReplyJob.Status) -> int:
    """Close the still-pending jobs of a run's batch (answered, handed off, or skipped). Returns how many."""
    if status == Status.PENDING:
        raise ValueError("jobs_finish needs a final status, not pending")
    return ReplyJob.objects.filter(pk__in=list(message_ids), status=Status.PENDING).update(status=status)


def jobs_pending_ids_query() -> QuerySet[ReplyJob, int]:
    """The ids of every pending job as a subquery (what credit holds and the history may still wait for)."""
    return ReplyJob.objects.filter(status=Status.PENDING).values_list("pk", flat=True)


def jobs_claim_stale(
    *, now: datetime, unpublished_before: datetime, enqueued_before: datetime, limit: int
) -> list[int]:
    """Claim pending jobs whose task is missing: never published (stored before `unpublished_before`), or
    published before `enqueued_before` and so lost. The claim is a row lock with SKIP LOCKED plus a new
    `enqueued_at`, so two sweepers (or two beat ticks) never take one job twice in a period."""
    stale = Q(enqueued_at__isnull=True, created_at__lt=unpublished_before) | Q(
        enqueued_at__lt=enqueued_before
    )
    with transaction.atomic():
        claimed = list(
            ReplyJob.objects.select_for_update(skip_locked=True)
            .filter(stale, status=Status.PENDING)
            .order_by("created_at", "pk")
            .values_list("pk", flat=True)[:limit]
        )
        ReplyJob.objects.filter(pk__in=claimed).update(enqueued_at=now)
    return claimed


def jobs_unclaim(*, message_ids: Collection[int], claimed_at: datetime) -> None:
    """Give claimed jobs back to the next sweep (the broker is still down)."""
    ReplyJob.objects.filter(pk__in=list(message_ids), enqueued_at=claimed_at).update(enqueued_at=None)
