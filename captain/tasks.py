"""Celery tasks of the AI team. They take ids (never message bodies) and call one service each."""

from __future__ import annotations

import logging
import random
from datetime import timedelta

from celery import Task, shared_task
from celery.exceptions import Reject, Retry
from django.utils import timezone
from opentelemetry import trace

from captain.conf import captain_setting
from captain.runtime import semconv as sc
from captain.services.credits import credit_holds_release_finished
from captain.services.jobs import job_mark_requeued, jobs_claim_stale, jobs_unclaim
from captain.services.runs import AccountBusy, ConversationBusy, debounce_remaining, run_for_message
from helpdesk.tracing import extract_context

logger = logging.getLogger(__name__)
tracer = trace.get_tracer("captain")

SWEEP_BATCH = 500


def _retry_later(task: Task, message_id: int, countdown: float) -> Retry:
    """Put the task back on the queue and record when, so the sweeper leaves it alone for a while.

    If the broker refuses the retry, Celery drops the task (Reject); the message is then marked unpublished so
    the sweeper takes it within SWEEP_UNPUBLISHED_AFTER_SECONDS instead of after a whole run's time.
    """
    try:
        retry = task.retry(countdown=countdown, max_retries=None, throw=False)
    except Reject:
        job_mark_requeued(message_id=message_id, published=False)
        raise
    job_mark_requeued(message_id=message_id, published=True)
    return retry


@shared_task(
    name="captain.tasks.reply_generate",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,
)
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


@shared_task(name="captain.tasks.playground_turn", acks_late=True, reject_on_worker_lost=True)
def playground_turn(run_id: int) -> str:
    """Answer one playground message (captain.services.playground); the page polls the row for progress."""
    from captain.services.playground import playground_turn_run

    return playground_turn_run(run_id=run_id)


@shared_task(name="captain.tasks.knowledge_document_process", acks_late=True)
def knowledge_document_process(document_id: int) -> str:
    """Extract, chunk and embed one knowledge document (captain.services.knowledge). Not rejected on a lost
    worker: a file that kills the worker would otherwise come back for ever (re-sync it by hand)."""
    from captain.services.knowledge import document_process

    return document_process(document_id=document_id)


@shared_task(name="captain.tasks.knowledge_resync_due", acks_late=True)
def knowledge_resync_due() -> int:
    """Queue the knowledge documents whose re-sync interval elapsed (beat, hourly)."""
    from captain.services.knowledge import documents_resync_due

    return documents_resync_due()


@shared_task(name="captain.tasks.faq_drafts_from_document", acks_late=True, reject_on_worker_lost=True)
def faq_drafts_from_document(document_id: int) -> int:
    """Draft pending FAQ entries from a ready document (captain.services.faq_drafts); no credits charged."""
    from captain.services.faq_drafts import faq_drafts_from_document as draft

    return draft(document_id=document_id)


@shared_task(name="captain.tasks.faq_drafts_from_conversation", acks_late=True, reject_on_worker_lost=True)
def faq_drafts_from_conversation(conversation_id: int) -> int:
    """Draft a pending FAQ entry from a resolved conversation a person answered; no credits charged."""
    from captain.services.faq_drafts import faq_drafts_from_conversation as draft

    return draft(conversation_id=conversation_id)


@shared_task(name="captain.tasks.faq_drafts_conversations_sweep", acks_late=True)
def faq_drafts_conversations_sweep() -> int:
    """Periodic (beat): queue drafting for conversations resolved lately with a person's answer."""
    from captain.services.faq_drafts import faq_drafts_conversations_sweep as sweep

    return sweep()


@shared_task(name="captain.tasks.draft_routing_examples", acks_late=True, reject_on_worker_lost=True)
def draft_routing_examples(scenario_id: int, force: bool = False) -> int:
    """Draft routing examples for a scenario's node (captain.services.example_drafts); no credits charged.
    Idempotent: drafts of the scenario's current texts are not written twice unless `force`."""
    from captain.services.example_drafts import example_drafts_run

    return example_drafts_run(scenario_id=scenario_id, force=force)


@shared_task(name="captain.tasks.routing_example_drafts_sweep", acks_late=True)
def routing_example_drafts_sweep() -> int:
    """Periodic (beat): queue drafting for enabled scenarios without drafts of their current texts."""
    from captain.services.example_drafts import example_drafts_sweep

    return example_drafts_sweep()


@shared_task(name="captain.tasks.span_retention_sweep", acks_late=True)
def span_retention_sweep() -> int:
    """Periodic (beat): delete stored spans older than SPAN_RETENTION_DAYS, in batches."""
    from captain.services.span_retention import spans_delete_expired

    return spans_delete_expired()


@shared_task(name="captain.tasks.sync_telegram_commands", acks_late=True)
def sync_telegram_commands(assistant_id: int) -> int:
    """Set the Telegram command menu of the assistant's bots to its enabled shortcuts (queued when a shortcut
    is saved or deleted). Idempotent: the menu is replaced as a whole from the current rows."""
    from captain.services.shortcuts import telegram_commands_sync

    return telegram_commands_sync(assistant_id=assistant_id)


@shared_task(name="captain.tasks.auto_resolve_judge", acks_late=True)
def auto_resolve_judge(conversation_id: int, quiet_since: str) -> str:
    """Judge one conversation the AI was handling that went quiet (captain.services.auto_resolve): resolved,
    or handed to people. Queued by helpdesk's auto-resolve sweep, once per quiet period; no credits charged.
    Not rejected on a lost worker: the sweep asks again once the period's claim lapses, instead of a
    conversation that kills its worker coming back at once for ever."""
    from datetime import datetime

    from captain.services.auto_resolve import judge_quiet_conversation

    return judge_quiet_conversation(
        conversation_id=conversation_id, quiet_since=datetime.fromisoformat(quiet_since)
    )


@shared_task(name="captain.tasks.copilot_generate", acks_late=True, reject_on_worker_lost=True)
def copilot_generate(run_id: int) -> str:
    """An agent's copilot request (draft, summary, rewrite): captain.services.copilot. A redelivered task runs
    it again; the charge is once per run."""
    from captain.services.copilot import copilot_run_execute

    return copilot_run_execute(run_id=run_id)
