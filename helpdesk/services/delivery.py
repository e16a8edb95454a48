"""Queueing outgoing messages for their channel. The outgoing Message row is the outbox record."""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from helpdesk.models import Message

logger = logging.getLogger(__name__)


def delivery_publish(*, message_id: int, trace_context: dict[str, str] | None = None) -> bool:
    """Put the delivery task on the queue. A broker outage is logged, not raised: the row stays queued with no
    `delivery_enqueued_at`, and `helpdesk.tasks.outbox_sweep` publishes it once the broker is back."""
    from helpdesk import tasks

    try:
        tasks.message_deliver.delay(message_id, trace_context=trace_context)
    except Exception:  # kombu raises several types for a down broker; all mean "the sweeper will do it"
        logger.exception(
            "could not enqueue delivery of message %s; the outbox sweeper will retry", message_id
        )
        return False
    Message.objects.filter(pk=message_id).update(delivery_enqueued_at=timezone.now())
    return True


def delivery_enqueue(*, message: Message) -> None:
    """Send after commit: a rolled-back reply must never reach the customer."""
    from helpdesk.tracing import inject_context

    message_id = message.id
    carrier = inject_context()
    transaction.on_commit(lambda: delivery_publish(message_id=message_id, trace_context=carrier))
