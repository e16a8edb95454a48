"""Celery tasks of the helpdesk: delivering outgoing messages. Tasks take ids, never message bodies."""

from __future__ import annotations

import logging
import random
from datetime import timedelta

from celery import shared_task
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

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


def lease_seconds() -> float:
    """How long one send may take: every part of a split message, each with its own timeout."""
    return helpdesk_setting("DELIVERY_TIMEOUT_SECONDS") * 4 + 30


@shared_task(bind=True, acks_late=True, max_retries=None)
def message_deliver(self, message_id: int, trace_context: dict[str, str] | None = None) -> str:
    """Send one outgoing message through its channel, retrying transient failures with backoff."""
    with tracing.tracer.start_as_current_span(
        tracing.SPAN_DELIVER, context=tracing.extract_context(trace_context)
    ) as span:
        span.set_attribute(tracing.ATTR_MESSAGE_ID, message_id)
        with transaction.atomic():
            # Only the message row is the lease's to lock. Locking the joined rows too (the conversation, the
            # contact's inbox row) took them in the reverse of the ingest's order and deadlocked on PostgreSQL.
            message = (
                Message.objects.select_for_update(no_key=True, of=("self",))
                .select_related("inbox", "conversation__contact_inbox")
                .filter(pk=message_id)
                .first()
            )
            if message is None or message.delivery_status != Message.DeliveryStatus.QUEUED:
                # Already sent or failed (a redelivered task): sending again would duplicate the reply.
                span.set_attribute(tracing.ATTR_DELIVERY_STATUS, "skipped")
                return "skipped"
            now = timezone.now()
            if message.delivery_lease_until and message.delivery_lease_until > now:
                # Another task is sending this row right now (a sweeper duplicate or a redelivery): wait for
                # its verdict instead of sending in parallel.
                busy = True
            else:
                busy = False
                message.delivery_attempts += 1
                message.delivery_lease_until = now + timedelta(seconds=lease_seconds())
                message.save(update_fields=["delivery_attempts", "delivery_lease_until"])
        if busy:
            span.set_attribute(tracing.ATTR_DELIVERY_STATUS, "busy")
            wait = (message.delivery_lease_until - timezone.now()).total_seconds() + 1
            raise self.retry(
                countdown=max(wait, 1), kwargs={"message_id": message_id, "trace_context": trace_context}
            )
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
        countdown = backoff_seconds(
            attempt,
            base=helpdesk_setting("DELIVERY_BACKOFF_SECONDS"),
            cap=helpdesk_setting("DELIVERY_BACKOFF_MAX_SECONDS"),
            retry_after=result.retry_after,
        )
        Message.objects.filter(pk=message_id).update(
            delivery_error=result.error,
            delivery_lease_until=None,
            # Due time of the retry: the outbox sweeper leaves the row alone until well after it.
            delivery_enqueued_at=timezone.now() + timedelta(seconds=countdown),
        )
        span.set_attribute(tracing.ATTR_DELIVERY_STATUS, "retrying")
        logger.warning(
            "delivery of message %s failed (%s); retry in %.1f s", message_id, result.error, countdown
        )
        raise self.retry(
            countdown=countdown, kwargs={"message_id": message_id, "trace_context": trace_context}
        )


@shared_task(acks_late=True)
def outbox_sweep() -> int:
    """Publish delivery tasks for outgoing messages that have none: the publish failed (broker down), or the
    worker died between committing the reply and publishing. Each stale row is claimed once per period
    (`skip_locked`, and the claim moves `delivery_enqueued_at`), so concurrent sweeps never double-publish."""
    from helpdesk.services.delivery import delivery_publish

    now = timezone.now()
    unpublished_cutoff = now - timedelta(seconds=helpdesk_setting("OUTBOX_UNPUBLISHED_AFTER_SECONDS"))
    # A published task that has not run by then is lost (e.g. purged queue): the backoff cap plus a margin.
    stale_cutoff = now - timedelta(
        seconds=helpdesk_setting("DELIVERY_BACKOFF_MAX_SECONDS") + lease_seconds() + 60
    )
    with transaction.atomic():
        ids = list(
            Message.objects.select_for_update(skip_locked=True)
            .filter(delivery_status=Message.DeliveryStatus.QUEUED)
            .filter(Q(delivery_lease_until__isnull=True) | Q(delivery_lease_until__lt=now))
            .filter(
                Q(delivery_enqueued_at__isnull=True, created_at__lt=unpublished_cutoff)
                | Q(delivery_enqueued_at__lt=stale_cutoff)
            )
            .order_by("created_at")
            .values_list("id", flat=True)[:500]
        )
        Message.objects.filter(pk__in=ids).update(delivery_enqueued_at=now)
    published = 0
    for message_id in ids:
        if not delivery_publish(message_id=message_id):
            # Broker still down: hand the rest back unclaimed for the next sweep.
            Message.objects.filter(pk__in=ids[published:]).update(delivery_enqueued_at=None)
            break
        published += 1
    return published
