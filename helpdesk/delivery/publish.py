"""Putting delivery tasks on the queue: after the reply's commit, and again from the outbox sweep."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from helpdesk.conf import helpdesk_setting
from helpdesk.models import Delivery, Message
from helpdesk.tracing import inject_context

from .outbox import deliveries_claim_unpublished, deliveries_unclaim, delivery_create, delivery_mark_published
from .send import lease_seconds
from .worker import message_deliver

logger = logging.getLogger(__name__)

SWEEP_BATCH = 500


def delivery_publish(*, message_id: int, trace_context: dict[str, str] | None = None) -> bool:
    """Put the delivery task on the queue. A broker outage is logged, not raised: the row stays queued with no
    `enqueued_at`, and the outbox sweep (`helpdesk.tasks.outbox_sweep`) publishes it once the broker is back."""
    try:
        message_deliver.delay(message_id, trace_context=trace_context)
    except Exception:  # kombu raises several types for a down broker; all mean "the sweeper will do it"
        logger.exception(
            "could not enqueue delivery of message %s; the outbox sweeper will retry", message_id
        )
        return False
    delivery_mark_published(message_id=message_id)
    return True


def delivery_enqueue(*, message: Message) -> Delivery:
    """Queue a new outgoing message: its outbox row now, in the caller's transaction, and the task after
    commit, because a rolled-back reply must never reach the customer."""
    delivery = delivery_create(message=message)
    message_id = message.id
    carrier = inject_context()
    transaction.on_commit(lambda: delivery_publish(message_id=message_id, trace_context=carrier))
    return delivery


def deliveries_republish(*, now: datetime | None = None) -> int:
    """Publish delivery tasks for queued messages that have none: the publish failed (broker down), or the
    worker died between committing the reply and publishing. Returns how many were published."""
    now = now or timezone.now()
    ids = deliveries_claim_unpublished(
        now=now,
        unpublished_before=now - timedelta(seconds=helpdesk_setting("OUTBOX_UNPUBLISHED_AFTER_SECONDS")),
        # A published task that has not run by then is lost (e.g. purged queue): the backoff cap plus a margin.
        stale_before=now
        - timedelta(seconds=helpdesk_setting("DELIVERY_BACKOFF_MAX_SECONDS") + lease_seconds() + 60),
        limit=SWEEP_BATCH,
    )
    published = 0
    for message_id in ids:
        if not delivery_publish(message_id=message_id):
            # Broker still down: hand the rest back unclaimed for the next sweep.
            deliveries_unclaim(message_ids=ids[published:])
            break
        published += 1
    return published
