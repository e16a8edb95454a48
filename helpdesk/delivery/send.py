"""One delivery attempt: take the row's lease, send through the channel, record the verdict."""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from django.db import transaction
from django.utils import timezone

from helpdesk.conf import helpdesk_setting
from helpdesk.models import Delivery

from .dispatch import delivery_dispatch
from .outcomes import delivery_mark_failed, delivery_mark_retrying, delivery_mark_sent

logger = logging.getLogger(__name__)

SendStatus = Literal["sent", "failed", "skipped", "busy", "retrying"]


@dataclass(frozen=True)
class SendResult:
    status: SendStatus
    attempt: int = 0
    """The attempt this call made (0 when it sent nothing: skipped or busy)."""
    retry_in: float = 0.0
    """Seconds until the task should run again ("busy" and "retrying")."""


def backoff_seconds(attempt: int, *, base: float, cap: float, retry_after: float | None = None) -> float:
    """Exponential backoff with full jitter; a provider's Retry-After is a floor, not a suggestion."""
    delay = random.uniform(0, min(cap, base * (2**attempt)))
    if retry_after is not None:
        delay = max(delay, retry_after)
    return min(delay, cap)


def lease_seconds(files: int = 0) -> float:
    """How long one send may take: every part of a split message, each with its own timeout, and two requests
    per attached file (WhatsApp uploads the file, then sends the message naming it)."""
    return helpdesk_setting("DELIVERY_TIMEOUT_SECONDS") * (4 + 2 * files) + 30


def delivery_send(*, message_id: int) -> SendResult:
    """Send one queued message unless it was already sent or failed, or another task holds its lease."""
    with transaction.atomic():
        # Only the delivery row is the lease's to lock. Locking the joined rows too (the conversation, the
        # contact's inbox row) took them in the reverse of the ingest's order and deadlocked on PostgreSQL.
        delivery = (
            Delivery.objects.select_for_update(no_key=True, of=("self",))
            .select_related("message__inbox", "message__conversation__contact_inbox")
            .filter(pk=message_id)
            .first()
        )
        if delivery is None or delivery.status != Delivery.Status.QUEUED:
            # Already sent or failed (a redelivered task): sending again would duplicate the reply.
            return SendResult(status="skipped")
        now = timezone.now()
        if delivery.lease_until and delivery.lease_until > now:
            # Another task is sending this row right now (a sweeper duplicate or a redelivery): wait for its
            # verdict instead of sending in parallel.
            wait = (delivery.lease_until - timezone.now()).total_seconds() + 1
            return SendResult(status="busy", retry_in=max(wait, 1))
        delivery.attempts += 1
        delivery.lease_until = now + timedelta(seconds=lease_seconds(len(delivery.message.attachments or [])))
        delivery.save(update_fields=["attempts", "lease_until", "updated_at"])
    attempt = delivery.attempts
    result = delivery_dispatch(delivery=delivery)
    if result.ok:
        delivery_mark_sent(message_id=message_id)
        return SendResult(status="sent", attempt=attempt)
    if result.permanent or attempt > helpdesk_setting("DELIVERY_MAX_RETRIES"):
        delivery_mark_failed(message_id=message_id, error=result.error)
        return SendResult(status="failed", attempt=attempt)
    countdown = backoff_seconds(
        attempt,
        base=helpdesk_setting("DELIVERY_BACKOFF_SECONDS"),
        cap=helpdesk_setting("DELIVERY_BACKOFF_MAX_SECONDS"),
        retry_after=result.retry_after,
    )
    delivery_mark_retrying(
        message_id=message_id, error=result.error, due=timezone.now() + timedelta(seconds=countdown)
    )
    logger.warning("delivery of message %s failed (%s); retry in %.1f s", message_id, result.error, countdown)
    return SendResult(status="retrying", attempt=attempt, retry_in=countdown)
