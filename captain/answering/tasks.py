"""Celery tasks that answer customers: one reply per message, its follow-up suggestions, the sweeper, span
retention."""

from __future__ import annotations

import logging
import random
from datetime import timedelta

from celery import Task, shared_task
from django.utils import timezone
from opentelemetry import trace

from captain.answering.services.credits import credit_holds_release_finished
from captain.answering.services.follow_ups import suggestions_send
from captain.answering.services.jobs import (
    job_mark_requeued,
    job_next_pending,
    jobs_claim_stale,
    jobs_unclaim,
)
from captain.answering.services.runs import AccountBusy, ConversationBusy, debounce_remaining, run_for_message
from captain.conf import captain_setting
from captain.runtime import semconv as sc
from helpdesk.tracing import extract_context, inject_context

logger = logging.getLogger(__name__)
tracer = trace.get_tracer("captain")

SWEEP_BATCH = 500


def _retry_later(task: Task, message_id: int, countdown: float) -> str:
    """Put the task back on the queue and record when, so the sweeper leaves it alone for a while.

    A fresh message with the same arguments, not Celery's `retry`: that raises, and the worker then copies every
    frame of the stack into the exception's info (a seventh of a busy gevent worker's CPU went there while
    conversations were busy). The task id changes; nothing reads it. If the broker refuses the message, it is
    marked unpublished so the sweeper takes it within SWEEP_UNPUBLISHED_AFTER_SECONDS instead of after a whole
    run's time.
    """
    try:
        task.apply_async(args=task.request.args, kwargs=task.request.kwargs, countdown=countdown)
    except Exception:  # kombu raises several types for a down broker; all mean "the sweeper will do it"
        job_mark_requeued(message_id=message_id, published=False)
        logger.warning("could not put message %s back on the queue; the sweeper will retry", message_id)
        return "requeue_failed"
    job_mark_requeued(message_id=message_id, published=True)
    logger.info("message %s put back for %.1f s", message_id, countdown)
    return "requeued"


@shared_task(
    name="captain.tasks.reply_generate",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,
)
def reply_generate(self: Task, message_id: int, trace_context: dict[str, str] | None = None) -> str:
    """Answer a customer message with the AI team (or hand it to people)."""
    with tracer.start_as_current_span(sc.SPAN_TASK, context=extract_context(trace_context)) as span:
        span.set_attribute(sc.CAPTAIN_TASK_NAME, "reply_generate")
        span.set_attribute(sc.CAPTAIN_MESSAGE_ID, message_id)
        # The customer may still be typing: wait for a quiet moment so a burst gets one reply.
        wait = debounce_remaining(message_id)
        if wait > 0.05:
            return _retry_later(self, message_id, wait)
        try:
            done = run_for_message(message_id=message_id)
        except ConversationBusy:
            # The running task answers every pending message it saw; this one re-checks soon and runs for
            # whatever arrived after that run took its batch.
            countdown = float(captain_setting("LOCK_RETRY_SECONDS"))
        except AccountBusy:
            # Queued work, not a refusal: the account is at its concurrent-run cap. Jitter spreads the retries
            # of a large burst so they do not come back in lockstep.
            countdown = float(captain_setting("ACCOUNT_BUSY_RETRY_SECONDS")) * random.uniform(0.5, 1.5)
        else:
            if done not in ("already_handled", "skipped"):
                _next_batch_now(message_id)
            return done
        return _retry_later(self, message_id, countdown)


def _next_batch_now(message_id: int) -> None:
    """Start the run for what arrived during this one, now that the conversation is free.

    Those messages' own tasks met the busy conversation and were put back for LOCK_RETRY_SECONDS; without this
    the customer would wait that long after our reply to their first message for the answer to the next. The
    put-back tasks still come and find their messages answered (`already_handled`); a failed publish costs only
    the saving. Not while the customer is still typing: their debounce then decides, as for any burst.
    """
    next_id = job_next_pending(message_id=message_id)
    if next_id is None or debounce_remaining(next_id) > 0.05:
        return
    try:
        reply_generate.apply_async((next_id,), {"trace_context": inject_context()})
    except Exception:  # kombu raises several types for a down broker; the put-back task still comes
        logger.warning("could not start the next run for message %s now; its own task follows", next_id)
        return
    job_mark_requeued(message_id=next_id, published=True)


@shared_task(
    name="captain.tasks.reply_suggestions_send",
    acks_late=True,
    reject_on_worker_lost=True,
)
def reply_suggestions_send(reply_message_id: int, trace_context: dict[str, str] | None = None) -> str:
    """Background lane: the follow-up questions of a reply already sent, as a message with quick replies (at
    most once per reply, however often this runs: captain.answering.services.follow_ups)."""
    with tracer.start_as_current_span(sc.SPAN_TASK, context=extract_context(trace_context)) as span:
        span.set_attribute(sc.CAPTAIN_TASK_NAME, "reply_suggestions_send")
        span.set_attribute(sc.CAPTAIN_MESSAGE_ID, reply_message_id)
        return suggestions_send(reply_message_id=reply_message_id)


@shared_task(name="captain.tasks.pending_messages_sweep", acks_late=True)
def pending_messages_sweep() -> int:
    """Re-enqueue customer messages that were stored but never answered, each once per period.

    Two kinds of pending job: publish failed at ingest (broker down: no `enqueued_at`, taken after
    SWEEP_UNPUBLISHED_AFTER_SECONDS), and enqueued longer ago than a run can last (worker killed, task lost:
    taken after SWEEP_AFTER_SECONDS, which exceeds the hard time limit). The claim (`jobs_claim_stale`) is a
    row lock with SKIP LOCKED plus a new `enqueued_at`, so two sweepers (or two beat ticks) never enqueue one
    message twice in a period. Enqueueing twice anyway would still be harmless: `run_for_message` does nothing for a
    message that is no longer pending, the conversation lock serialises runs, and the attempt counter ends a
    poison message in a handoff.
    """
    now = timezone.now()
    released = credit_holds_release_finished()
    if released:
        logger.warning("sweeper released %s credit holds of finished messages", released)
    claimed = jobs_claim_stale(
        now=now,
        unpublished_before=now - timedelta(seconds=captain_setting("SWEEP_UNPUBLISHED_AFTER_SECONDS")),
        # A task's countdown (debounce) delays its start; count it in so a waiting task is not swept.
        enqueued_before=now
        - timedelta(
            seconds=captain_setting("SWEEP_AFTER_SECONDS") + float(captain_setting("DEBOUNCE_MAX_SECONDS"))
        ),
        limit=SWEEP_BATCH,
    )
    published = 0
    for message_id in claimed:
        try:
            reply_generate.apply_async((message_id,))
        except Exception:  # the broker is still down: give the rest back for the next tick
            logger.exception("sweeper could not enqueue message %s; will retry next tick", message_id)
            jobs_unclaim(message_ids=claimed[published:], claimed_at=now)
            break
        published += 1
    if claimed:
        logger.info("sweeper re-enqueued %s of %s stale messages", published, len(claimed))
    return published


@shared_task(name="captain.tasks.span_retention_sweep", acks_late=True)
def span_retention_sweep() -> int:
    """Periodic (beat): delete stored spans older than SPAN_RETENTION_DAYS, in batches."""
    from captain.answering.services.span_retention import spans_delete_expired

    return spans_delete_expired()


@shared_task(name="captain.tasks.prompt_prefixes_warm", acks_late=True)
def prompt_prefixes_warm() -> int:
    """Queued when a worker starts (customer lane: `scripts/run` says ready once it is over): the recently active
    assistants' fixed prompts to their model, so the first reply reads only what is new
    (captain.answering.services.warmup)."""
    from captain.answering.services.warmup import prompt_prefixes_warm as warm

    return warm()


@shared_task(name="captain.tasks.assistant_prompt_warm", acks_late=True)
def assistant_prompt_warm(assistant_id: int) -> int:
    """Queued (background lane) a few seconds after a builder changed what an assistant's agents are told
    (instructions, scenarios, tools): their new fixed prompts to the model, so the next customer reads only
    what is new instead of the whole changed prompt (captain.answering.services.warmup)."""
    from captain.answering.services.warmup import prompt_prefixes_warm as warm

    return warm(assistant_id=assistant_id)
