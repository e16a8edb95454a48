"""Celery tasks of the AI team. They take ids (never message bodies) and call one service each."""

from __future__ import annotations

import logging
import random
from datetime import datetime, timedelta

from celery import Task, shared_task
from celery.exceptions import Reject, Retry
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from opentelemetry import trace

from helpdesk.models import Message
from helpdesk.tracing import extract_context

from .conf import captain_setting
from .runtime import semconv as sc
from .services.credits import credit_holds_release_finished
from .services.runs import AccountBusy, ConversationBusy, debounce_remaining, run_for_message

logger = logging.getLogger(__name__)
tracer = trace.get_tracer("captain")

SWEEP_BATCH = 500


def _retry_later(task: Task, message_id: int, countdown: float) -> Retry:
    """Put the task back on the queue and record when, so the sweeper leaves it alone for a while.

    If the broker refuses the retry, Celery drops the task (Reject); the message is then marked unpublished so
    the sweeper takes it within SWEEP_UNPUBLISHED_AFTER_SECONDS instead of after a whole run's time.
    """
    pending = Message.objects.filter(pk=message_id, ai_status=Message.AIStatus.PENDING)
    try:
        retry = task.retry(countdown=countdown, max_retries=None, throw=False)
    except Reject:
        pending.update(ai_enqueued_at=None)
        raise
    pending.update(ai_enqueued_at=timezone.now())
    return retry


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None)
def reply_generate(self, message_id: int, trace_context: dict[str, str] | None = None) -> str:
    """Answer a customer message with the AI team (or hand it to people)."""
    with tracer.start_as_current_span(sc.SPAN_TASK, context=extract_context(trace_context)) as span:
        span.set_attribute(sc.CAPTAIN_TASK_NAME, "reply_generate")
        span.set_attribute(sc.CAPTAIN_MESSAGE_ID, message_id)
        # The customer may still be typing: wait for a quiet moment so a burst gets one reply.
        wait = debounce_remaining(message_id)
        if wait > 0.05:
            raise _retry_later(self, message_id, wait)
        try:
            return run_for_message(message_id=message_id)
        except ConversationBusy:
            # The running task answers every pending message it saw; this one re-checks soon and runs for
            # whatever arrived after that run took its batch.
            countdown = float(captain_setting("LOCK_RETRY_SECONDS"))
        except AccountBusy:
            # Queued work, not a refusal: the account is at its concurrent-run cap. Jitter spreads the retries
            # of a large burst so they do not come back in lockstep.
            countdown = float(captain_setting("ACCOUNT_BUSY_RETRY_SECONDS")) * random.uniform(0.5, 1.5)
        raise _retry_later(self, message_id, countdown)


def _stale_pending(now: datetime) -> Q:
    unpublished = now - timedelta(seconds=captain_setting("SWEEP_UNPUBLISHED_AFTER_SECONDS"))
    # A task's countdown (debounce) delays its start; count it in so a waiting task is not swept.
    enqueued = now - timedelta(
        seconds=captain_setting("SWEEP_AFTER_SECONDS") + float(captain_setting("DEBOUNCE_MAX_SECONDS"))
    )
    return Q(ai_enqueued_at__isnull=True, created_at__lt=unpublished) | Q(ai_enqueued_at__lt=enqueued)


@shared_task(acks_late=True)
def pending_messages_sweep() -> int:
    """Re-enqueue customer messages that were stored but never answered, each once per period.

    Two kinds: publish failed at ingest (broker down: `ai_enqueued_at` is null, taken after
    SWEEP_UNPUBLISHED_AFTER_SECONDS), and enqueued longer ago than a run can last (worker killed, task lost:
    taken after SWEEP_AFTER_SECONDS, which exceeds the hard time limit). The claim is a row lock with
    SKIP LOCKED plus a new `ai_enqueued_at`, so two sweepers (or two beat ticks) never enqueue one message
    twice in a period. Enqueueing twice anyway would still be harmless: `run_for_message` does nothing for a
    message that is no longer pending, the conversation lock serialises runs, and the attempt counter ends a
    poison message in a handoff.
    """
    now = timezone.now()
    released = credit_holds_release_finished()
    if released:
        logger.warning("sweeper released %s credit holds of finished messages", released)
    with transaction.atomic():
        claimed = list(
            Message.objects.select_for_update(skip_locked=True)
            .filter(_stale_pending(now), ai_status=Message.AIStatus.PENDING)
            .order_by("created_at", "id")
            .values_list("id", flat=True)[:SWEEP_BATCH]
        )
        Message.objects.filter(pk__in=claimed).update(ai_enqueued_at=now)
    published = 0
    for message_id in claimed:
        try:
            reply_generate.apply_async((message_id,))
        except Exception:  # the broker is still down: give the rest back for the next tick
            logger.exception("sweeper could not enqueue message %s; will retry next tick", message_id)
            Message.objects.filter(pk__in=claimed[published:], ai_enqueued_at=now).update(ai_enqueued_at=None)
            break
        published += 1
    if claimed:
        logger.info("sweeper re-enqueued %s of %s stale messages", published, len(claimed))
    return published


@shared_task(acks_late=True, reject_on_worker_lost=True)
def playground_turn(run_id: int) -> str:
    """Answer one playground message (captain.services.playground); the page polls the row for progress."""
    from .services.playground import playground_turn_run

    return playground_turn_run(run_id=run_id)
