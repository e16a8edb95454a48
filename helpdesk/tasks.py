"""Celery tasks of the helpdesk: delivering outgoing messages. Tasks take ids, never message bodies."""

from __future__ import annotations

import logging
import random

from celery import shared_task
from django.db import transaction

from helpdesk import tracing
from helpdesk.conf import helpdesk_setting
from helpdesk.models import Message
from helpdesk.services.delivery_outcomes import delivery_mark_failed, delivery_mark_sent
from helpdesk.services.outbound import outbound_send

logger = logging.getLogger(__name__)


def backoff_seconds(attempt: int, *, base: float, cap: float, retry_after: float | None = None) -> float:
    """Exponential backoff with full jitter; a provider's Retry-After is a floor, not a suggestion."""
    delay = random.uniform(0, min(cap, base * (2**attempt)))
    if retry_after is not None:
        delay = max(delay, retry_after)
    return min(delay, cap)


@shared_task(bind=True, acks_late=True, max_retries=None)
def message_deliver(self, message_id: int, trace_context: dict[str, str] | None = None) -> str:
    """Send one outgoing message through its channel, retrying transient failures with backoff."""
    with tracing.tracer.start_as_current_span(
        tracing.SPAN_DELIVER, context=tracing.extract_context(trace_context)
    ) as span:
        span.set_attribute(tracing.ATTR_MESSAGE_ID, message_id)
        with transaction.atomic():
            message = (
                Message.objects.select_for_update()
                .select_related("inbox", "conversation__contact_inbox")
                .filter(pk=message_id)
                .first()
            )
            if message is None or message.delivery_status != Message.DeliveryStatus.QUEUED:
                # Already sent or failed (a redelivered task): sending again would duplicate the reply.
                span.set_attribute(tracing.ATTR_DELIVERY_STATUS, "skipped")
                return "skipped"
            message.delivery_attempts += 1
            message.save(update_fields=["delivery_attempts"])
        attempt = message.delivery_attempts
        span.set_attribute(tracing.ATTR_DELIVERY_ATTEMPT, attempt)
        result = outbound_send(message=message)
        if result.ok:
            delivery_mark_sent(message_id=message_id)
            span.set_attribute(tracing.ATTR_DELIVERY_STATUS, "sent")
            return "sent"
        max_retries = helpdesk_setting("DELIVERY_MAX_RETRIES")
        if result.permanent or attempt > max_retries:
            delivery_mark_failed(message_id=message_id, error=result.error)
            span.set_attribute(tracing.ATTR_DELIVERY_STATUS, "failed")
            return "failed"
        Message.objects.filter(pk=message_id).update(delivery_error=result.error)
        countdown = backoff_seconds(
            attempt,
            base=helpdesk_setting("DELIVERY_BACKOFF_SECONDS"),
            cap=helpdesk_setting("DELIVERY_BACKOFF_MAX_SECONDS"),
            retry_after=result.retry_after,
        )
        span.set_attribute(tracing.ATTR_DELIVERY_STATUS, "retrying")
        logger.warning(
            "delivery of message %s failed (%s); retry in %.1f s", message_id, result.error, countdown
        )
        raise self.retry(
            countdown=countdown, kwargs={"message_id": message_id, "trace_context": trace_context}
        )
