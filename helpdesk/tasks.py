"""Celery tasks of the helpdesk: delivering outgoing messages (helpdesk/delivery/). Tasks take ids, never
message bodies. The conversation timers (snooze, auto-resolve) are in helpdesk/timers.py: they change
conversations through the services, which this module must stay below (tests/helpdesk/test_import_cycles.py)."""

from __future__ import annotations

from datetime import timedelta

from celery import Task, shared_task
from django.utils import timezone

from helpdesk.conf import helpdesk_setting
from helpdesk.delivery.publish import deliveries_republish
from helpdesk.delivery.send import backoff_seconds
from helpdesk.delivery.worker import message_deliver
from helpdesk.services.attachments import FETCH_TASK, attachment_fetch_by_id
from helpdesk.services.audit import audit_purge
from helpdesk.services.event_webhooks import (
    DELIVER_TASK,
    webhook_deliveries_purge,
    webhook_deliveries_republish,
    webhook_delivery_attempt,
)
from helpdesk.services.sign_ins import sign_ins_purge

__all__ = [
    "attachment_fetch",
    "audit_retention_sweep",
    "event_webhook_deliver",
    "event_webhooks_retention_sweep",
    "event_webhooks_sweep",
    "message_deliver",
    "outbox_sweep",
]


@shared_task(acks_late=True)
def outbox_sweep() -> int:
    """Publish delivery tasks for outgoing messages that have none (`deliveries_republish`). Each stale row is
    claimed once per period, so concurrent sweeps never double-publish."""
    return deliveries_republish()


@shared_task(name=FETCH_TASK, bind=True, acks_late=True, max_retries=None)
def attachment_fetch(self: Task, attachment_id: int) -> str:
    """Fetch one file a customer sent (`attachment_fetch_by_id`); a transient failure is retried with backoff,
    at most `ATTACHMENT_FETCH_MAX_RETRIES` times (the row then stays failed, with the reason)."""
    result = attachment_fetch_by_id(attachment_id=attachment_id)
    if result is None:
        return "gone"
    if result.transient and self.request.retries < int(helpdesk_setting("ATTACHMENT_FETCH_MAX_RETRIES")):
        countdown = backoff_seconds(
            self.request.retries + 1,
            base=float(helpdesk_setting("DELIVERY_BACKOFF_SECONDS")),
            cap=float(helpdesk_setting("DELIVERY_BACKOFF_MAX_SECONDS")),
        )
        raise self.retry(countdown=countdown, kwargs={"attachment_id": attachment_id})
    return result.status


@shared_task(acks_late=True)
def audit_retention_sweep() -> int:
    """Delete audit log entries older than `AUDIT_RETENTION_DAYS` (0 keeps them); returns how many went."""
    days = int(helpdesk_setting("AUDIT_RETENTION_DAYS"))
    if days <= 0:
        return 0
    return audit_purge(older_than=timezone.now() - timedelta(days=days))


@shared_task(acks_late=True)
def sign_in_retention_sweep() -> int:
    """Delete sign-in history older than `SIGN_IN_RETENTION_DAYS` (0 keeps it); returns how many went."""
    days = int(helpdesk_setting("SIGN_IN_RETENTION_DAYS"))
    if days <= 0:
        return 0
    return sign_ins_purge(older_than=timezone.now() - timedelta(days=days))


@shared_task(name=DELIVER_TASK, bind=True, acks_late=True, max_retries=None)
def event_webhook_deliver(self: Task, delivery_id: int) -> str:
    """Send one event to one webhook endpoint (`webhook_delivery_attempt`), retrying with backoff until it is
    sent or given up (`DELIVERY_MAX_RETRIES`); the row is the delivery log either way."""
    result = webhook_delivery_attempt(delivery_id=delivery_id)
    if result.status in ("busy", "retrying"):
        raise self.retry(countdown=result.retry_in, kwargs={"delivery_id": delivery_id})
    return result.status


@shared_task(acks_late=True)
def event_webhooks_sweep() -> int:
    """Publish webhook deliveries whose task was never published or got lost (`webhook_deliveries_republish`)."""
    return webhook_deliveries_republish()


@shared_task(acks_late=True)
def event_webhooks_retention_sweep() -> int:
    """Delete finished webhook deliveries older than `WEBHOOK_DELIVERY_RETENTION_DAYS` (0 keeps them)."""
    days = int(helpdesk_setting("WEBHOOK_DELIVERY_RETENTION_DAYS"))
    if days <= 0:
        return 0
    return webhook_deliveries_purge(older_than=timezone.now() - timedelta(days=days))
