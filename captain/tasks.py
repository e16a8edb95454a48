"""Celery tasks of the AI team. They take ids (never message bodies) and call one service each."""

from __future__ import annotations

from celery import shared_task
from opentelemetry import trace

from helpdesk.tracing import extract_context

from .conf import captain_setting
from .runtime import semconv as sc
from .services.runs import ConversationBusy, run_for_message

tracer = trace.get_tracer("captain")


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None)
def reply_generate(self, message_id: int, trace_context: dict[str, str] | None = None) -> str:
    """Answer a customer message with the AI team (or hand it to people)."""
    with tracer.start_as_current_span(sc.SPAN_TASK, context=extract_context(trace_context)) as span:
        span.set_attribute(sc.CAPTAIN_TASK_NAME, "reply_generate")
        span.set_attribute(sc.CAPTAIN_MESSAGE_ID, message_id)
        try:
            return run_for_message(message_id=message_id)
        except ConversationBusy:
            # The running task answers every pending message of the conversation; this one re-checks soon.
            raise self.retry(countdown=captain_setting("LOCK_RETRY_SECONDS"), max_retries=None) from None


@shared_task(acks_late=True)
def pending_messages_sweep() -> int:
    """Re-enqueue customer messages that were stored but never answered (broker down at ingest, worker killed).

    Enqueueing a message twice is harmless: `run_for_message` does nothing for a message that is no longer
    pending, the conversation lock serialises runs, and the attempt counter ends a poison message in a handoff.
    """
    from datetime import timedelta

    from django.utils import timezone

    from helpdesk.models import Message

    cutoff = timezone.now() - timedelta(seconds=captain_setting("SWEEP_AFTER_SECONDS"))
    stale = list(
        Message.objects.filter(ai_status=Message.AIStatus.PENDING, created_at__lt=cutoff)
        .order_by("created_at")
        .values_list("id", flat=True)[:500]
    )
    for message_id in stale:
        reply_generate.delay(message_id)
    return len(stale)
