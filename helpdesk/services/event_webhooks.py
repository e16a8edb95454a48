"""Outbound event webhooks: an account's integrations are told what happens to its conversations.

- Events (helpdesk.models.WebhookEvent): `conversation_created`, `conversation_updated` (status, assignee,
  team, priority, labels, snooze), `conversation_resolved`, `message_created` (incoming and outgoing; not
  private notes or activity lines), `handoff` (handed to people) and `csat` (a rating or its comment).
- `event_emit` is the one entry point: it writes one outbox row (helpdesk.models.WebhookDelivery) per subscribed
  endpoint in the caller's transaction and publishes the delivery tasks after commit, so a rolled-back change
  sends nothing. Model signals (`connect_signals`, from HelpdeskConfig.ready) call it for every save, whichever
  service, task or admin made it; writes through `QuerySet.update()` call `conversation_updated` themselves.
- Sending reuses the API channel's signed POST (helpdesk.channels.signed_post.post_signed): the same headers
  (`X-Helpdesk-Timestamp`, `X-Helpdesk-Signature: sha256=HMAC(secret, "{ts}.{body}")`, `X-Helpdesk-Event-Id`),
  the outbound policy, no redirects, the receiver's body never read. Retries use the message delivery's
  settings and backoff (`DELIVERY_MAX_RETRIES`, `DELIVERY_TIMEOUT_SECONDS`, `DELIVERY_BACKOFF_*`).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from celery import current_app
from django.db import transaction
from django.db.models import Q
from django.db.models.signals import m2m_changed, post_save
from django.utils import timezone

from helpdesk.channels.signed_post import post_signed
from helpdesk.conf import helpdesk_setting
from helpdesk.crypto import SecretUnreadable
from helpdesk.delivery.send import backoff_seconds
from helpdesk.models import (
    Conversation,
    CsatResponse,
    Message,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
)

logger = logging.getLogger(__name__)

DELIVER_TASK = "helpdesk.tasks.event_webhook_deliver"
SWEEP_BATCH = 500
# A save writing one of these is news for an integration; others (last activity ...) are bookkeeping.
UPDATE_FIELDS = frozenset(
    {"status", "assignee", "assignee_id", "team", "team_id", "priority", "snoozed_until", "custom_attributes"}
)
HANDOFF_FIELDS = frozenset({"escalated_at", "escalation_reason"})


# ---- emitting: one outbox row per subscribed endpoint, the task after commit --------------------------------


def event_emit(*, account_id: int, event: str, data: dict[str, Any]) -> list[int]:
    """Queue `event` for every enabled endpoint of the account that subscribed to it; returns the row ids."""
    endpoints = [
        endpoint
        for endpoint in WebhookEndpoint.objects.filter(account_id=account_id, enabled=True).only(
            "id", "events"
        )
        if event in endpoint.events
    ]
    if not endpoints:
        return []
    event_id = uuid.uuid4()
    now = timezone.now()
    payload = {
        "event": event,
        "event_id": str(event_id),
        "account_id": account_id,
        "created_at": now.isoformat(),
        "data": data,
    }
    rows = WebhookDelivery.objects.bulk_create(
        [
            WebhookDelivery(
                account_id=account_id,
                endpoint_id=endpoint.pk,
                event=event,
                event_id=event_id,
                payload=payload,
                created_at=now,
            )
            for endpoint in endpoints
        ]
    )
    ids = [row.pk for row in rows]
    transaction.on_commit(lambda: webhook_deliveries_publish(delivery_ids=ids))
    return ids


def webhook_deliveries_publish(*, delivery_ids: Iterable[int]) -> int:
    """Put the delivery tasks on the queue (sent by name: helpdesk.tasks imports this module). A broker outage
    leaves the rows unpublished for the sweep (`webhook_deliveries_republish`). Eager mode (no broker): the
    first attempt runs here."""
    app = current_app
    published = 0
    for delivery_id in delivery_ids:
        if app.conf.task_always_eager:
            webhook_delivery_attempt(delivery_id=delivery_id)
            continue
        try:
            app.send_task(DELIVER_TASK, args=[delivery_id])
        except Exception:  # kombu raises several types for a down broker; the sweep publishes it later
            logger.exception("could not enqueue webhook delivery %s; the sweep will retry", delivery_id)
            break
        WebhookDelivery.objects.filter(pk=delivery_id).update(enqueued_at=timezone.now())
        published += 1
    return published


def webhook_delivery_replay(*, delivery: WebhookDelivery) -> WebhookDelivery:
    """Send a delivery's event again (same event id, payload and endpoint) as a new row of the log."""
    replay = WebhookDelivery.objects.create(
        account_id=delivery.account_id,
        endpoint_id=delivery.endpoint_id,
        event=delivery.event,
        event_id=delivery.event_id,
        payload=delivery.payload,
        replay_of=delivery,
    )
    transaction.on_commit(lambda: webhook_deliveries_publish(delivery_ids=[replay.pk]))
    return replay


# ---- sending -------------------------------------------------------------------------------------------------

AttemptStatus = Literal["sent", "failed", "retrying", "busy", "skipped"]


@dataclass(frozen=True)
class Attempt:
    status: AttemptStatus
    retry_in: float = 0.0


def _lease_seconds() -> float:
    return float(helpdesk_setting("DELIVERY_TIMEOUT_SECONDS")) + 30


def _claim(delivery_id: int) -> WebhookDelivery | Attempt:
    with transaction.atomic():
        delivery = (
            WebhookDelivery.objects.select_for_update(of=("self",))
            .select_related("endpoint")
            .filter(pk=delivery_id)
            .first()
        )
        if delivery is None or delivery.status != WebhookDelivery.Status.QUEUED:
            return Attempt("skipped")  # already sent or given up (a redelivered task)
        now = timezone.now()
        if delivery.lease_until and delivery.lease_until > now:
            return Attempt("busy", retry_in=max((delivery.lease_until - now).total_seconds() + 1, 1))
        delivery.attempts += 1
        delivery.lease_until = now + timedelta(seconds=_lease_seconds())
        delivery.save(update_fields=["attempts", "lease_until", "updated_at"])
    return delivery


def _finish(delivery: WebhookDelivery, status: str, *, error: str = "", **fields: Any) -> None:
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status=status, last_error=error[:2000], lease_until=None, updated_at=timezone.now(), **fields
    )


def webhook_delivery_attempt(*, delivery_id: int) -> Attempt:
    """One attempt: take the row's lease, POST the signed event, record the outcome, say when to retry."""
    claimed = _claim(delivery_id)
    if isinstance(claimed, Attempt):
        return claimed
    delivery, endpoint = claimed, claimed.endpoint
    if not endpoint.enabled:
        _finish(delivery, WebhookDelivery.Status.FAILED, error="The endpoint is disabled.")
        return Attempt("failed")
    try:
        secret = endpoint.secret()
    except SecretUnreadable:
        _finish(delivery, WebhookDelivery.Status.FAILED, error="The signing secret cannot be read (keys).")
        return Attempt("failed")
    started = time.monotonic()
    result = post_signed(
        url=endpoint.url,
        secret=secret,
        event=delivery.payload,
        event_id=str(delivery.event_id),
        timeout=float(helpdesk_setting("DELIVERY_TIMEOUT_SECONDS")),
    )
    measured: dict[str, Any] = {
        "duration_ms": round((time.monotonic() - started) * 1000),
        "last_status_code": result.status_code,
    }
    if result.ok:
        _finish(delivery, WebhookDelivery.Status.SENT, **measured)
        return Attempt("sent")
    if result.permanent or delivery.attempts > int(helpdesk_setting("DELIVERY_MAX_RETRIES")):
        _finish(delivery, WebhookDelivery.Status.FAILED, error=result.error, **measured)
        logger.warning("webhook delivery %s given up: %s", delivery.pk, result.error)
        return Attempt("failed")
    countdown = backoff_seconds(
        delivery.attempts,
        base=float(helpdesk_setting("DELIVERY_BACKOFF_SECONDS")),
        cap=float(helpdesk_setting("DELIVERY_BACKOFF_MAX_SECONDS")),
        retry_after=result.retry_after,
    )
    due = timezone.now() + timedelta(seconds=countdown)
    _finish(delivery, WebhookDelivery.Status.QUEUED, error=result.error, enqueued_at=due, **measured)
    return Attempt("retrying", retry_in=countdown)


def webhook_deliveries_republish(*, now: datetime | None = None) -> int:
    """Publish tasks for queued rows that have none: never published (broker down at commit) or published and
    lost (a purged queue). Each row is claimed once per period, so concurrent sweeps never double-publish."""
    now = now or timezone.now()
    unpublished_before = now - timedelta(seconds=int(helpdesk_setting("OUTBOX_UNPUBLISHED_AFTER_SECONDS")))
    stale_before = now - timedelta(
        seconds=float(helpdesk_setting("DELIVERY_BACKOFF_MAX_SECONDS")) + _lease_seconds() + 60
    )
    with transaction.atomic():
        ids = list(
            WebhookDelivery.objects.select_for_update(skip_locked=True)
            .filter(status=WebhookDelivery.Status.QUEUED)
            .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
            .filter(
                Q(enqueued_at__isnull=True, created_at__lt=unpublished_before)
                | Q(enqueued_at__lt=stale_before)
            )
            .order_by("created_at")
            .values_list("pk", flat=True)[:SWEEP_BATCH]
        )
        WebhookDelivery.objects.filter(pk__in=ids).update(enqueued_at=now)
    return webhook_deliveries_publish(delivery_ids=ids)


def webhook_deliveries_purge(*, older_than: datetime, batch: int = 5000) -> int:
    """Delete finished deliveries (sent or given up) created before `older_than`, one short DELETE per batch
    within a time budget (the hourly sweep goes on); queued rows are never deleted."""
    started, total = time.monotonic(), 0
    finished = [WebhookDelivery.Status.SENT, WebhookDelivery.Status.FAILED]
    while True:
        rows = WebhookDelivery.objects.filter(created_at__lt=older_than, status__in=finished)
        deleted, _ = WebhookDelivery.objects.filter(pk__in=rows.order_by().values("pk")[:batch]).delete()
        total += deleted
        if deleted < batch or time.monotonic() - started >= 30:
            return total


# ---- where events happen: model signals, and `conversation_updated` for writes that send none ---------------


def conversation_data(conversation: Conversation) -> dict[str, Any]:
    return {
        "conversation_id": conversation.pk,
        "inbox_id": conversation.inbox_id,
        "contact_id": conversation.contact_id,
        "status": conversation.status,
        "priority": conversation.priority,
        "assignee_id": conversation.assignee_id,
        "team_id": conversation.team_id,
        "snoozed_until": conversation.snoozed_until.isoformat() if conversation.snoozed_until else None,
    }


def conversation_updated(conversation: Conversation) -> None:
    """For services that change a conversation with `QuerySet.update()` (no signal): assignee, priority, team."""
    event_emit(
        account_id=conversation.account_id,
        event=WebhookEvent.CONVERSATION_UPDATED,
        data=conversation_data(conversation),
    )


def _conversation_saved(
    sender: type, instance: Conversation, created: bool, update_fields: Iterable[str] | None = None, **kw: Any
) -> None:
    if kw.get("raw"):
        return
    account_id, data = instance.account_id, conversation_data(instance)
    if created:
        event_emit(account_id=account_id, event=WebhookEvent.CONVERSATION_CREATED, data=data)
        return
    fields = frozenset(update_fields) if update_fields is not None else None
    # A save without update_fields says nothing of what changed: it is an update, never a resolution or handoff.
    if fields is None or fields & UPDATE_FIELDS:
        event_emit(account_id=account_id, event=WebhookEvent.CONVERSATION_UPDATED, data=data)
    if fields is not None and "status" in fields and instance.status == Conversation.Status.RESOLVED:
        event_emit(account_id=account_id, event=WebhookEvent.CONVERSATION_RESOLVED, data=data)
    if fields is not None and fields & HANDOFF_FIELDS and instance.escalated_at is not None:
        handoff = {**data, "reason": instance.escalation_reason}
        event_emit(account_id=account_id, event=WebhookEvent.HANDOFF, data=handoff)


def _labels_changed(sender: type, instance: Any, action: str, reverse: bool, **kw: Any) -> None:
    if (
        action in {"post_add", "post_remove", "post_clear"}
        and not reverse
        and isinstance(instance, Conversation)
    ):
        data = {
            **conversation_data(instance),
            "labels": sorted(instance.labels.values_list("name", flat=True)),
        }
        event_emit(account_id=instance.account_id, event=WebhookEvent.CONVERSATION_UPDATED, data=data)


def _message_saved(sender: type, instance: Message, created: bool, **kw: Any) -> None:
    # What the customer and the team said: private notes stay inside the team (an integration is an outside
    # system) and activity lines ("resolved by ...") are told by the conversation events.
    if not created or kw.get("raw") or instance.private or instance.message_type == Message.Type.ACTIVITY:
        return
    data = {
        "message_id": instance.pk,
        "conversation_id": instance.conversation_id,
        "inbox_id": instance.inbox_id,
        "message_type": instance.message_type,
        "sender_type": instance.sender_type,
        "content": instance.content,
        "created_at": instance.created_at.isoformat(),
    }
    event_emit(account_id=instance.account_id, event=WebhookEvent.MESSAGE_CREATED, data=data)


def _csat_saved(sender: type, instance: CsatResponse, created: bool, **kw: Any) -> None:
    if kw.get("raw"):
        return
    data = {
        "conversation_id": instance.conversation_id,
        "rating": instance.rating,
        "comment": instance.comment,
    }
    event_emit(account_id=instance.account_id, event=WebhookEvent.CSAT, data=data)


def connect_signals() -> None:
    post_save.connect(_conversation_saved, sender=Conversation, dispatch_uid="event-webhooks-conversation")
    post_save.connect(_message_saved, sender=Message, dispatch_uid="event-webhooks-message")
    post_save.connect(_csat_saved, sender=CsatResponse, dispatch_uid="event-webhooks-csat")
    m2m_changed.connect(
        _labels_changed, sender=Conversation.labels.through, dispatch_uid="event-webhooks-labels"
    )
