"""Celery tasks of the helpdesk: delivering outgoing messages (helpdesk/delivery/). Tasks take ids, never
message bodies."""

from __future__ import annotations

from celery import shared_task

from helpdesk.delivery.publish import deliveries_republish
from helpdesk.delivery.worker import message_deliver

__all__ = ["message_deliver", "outbox_sweep"]


@shared_task(acks_late=True)
def outbox_sweep() -> int:
    """Publish delivery tasks for outgoing messages that have none (`deliveries_republish`). Each stale row is
    claimed once per period, so concurrent sweeps never double-publish."""
    return deliveries_republish()
