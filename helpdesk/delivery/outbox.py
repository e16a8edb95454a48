"""The outbox rows: one `Delivery` per outgoing message, and the reads and writes the task and sweeper share."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from helpdesk.models import Delivery, Message


def delivery_create(*, message: Message) -> Delivery:
    """The queued outbox row of a new outgoing message, in the caller's transaction."""
    return Delivery.objects.create(
        message=message, status=Delivery.Status.QUEUED, created_at=message.created_at
    )


def delivery_update(*, message_id: int, **fields: Any) -> int:
    """Write some of a delivery's fields (and its `updated_at`, which `update()` does not touch)."""
    return Delivery.objects.filter(pk=message_id).update(**fields, updated_at=timezone.now())


def delivery_mark_published(*, message_id: int) -> None:
    """The delivery task is on the queue: the sweeper leaves the row alone until the task is overdue."""
    delivery_update(message_id=message_id, enqueued_at=timezone.now())


def deliveries_claim_unpublished(
    *, now: datetime, unpublished_before: datetime, stale_before: datetime, limit: int
) -> list[int]:
    """Claim queued deliveries that have no task: never published (created before `unpublished_before`), or
    published before `stale_before` and lost. Each is claimed once per period (`skip_locked`, and the claim
    moves `enqueued_at`), so concurrent sweeps never double-publish. A row under a live lease is being sent."""
    with transaction.atomic():
        ids = list(
            Delivery.objects.select_for_update(skip_locked=True)
            .filter(status=Delivery.Status.QUEUED)
            .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
            .filter(
                Q(enqueued_at__isnull=True, created_at__lt=unpublished_before)
                | Q(enqueued_at__lt=stale_before)
            )
            .order_by("created_at")
            .values_list("pk", flat=True)[:limit]
        )
        Delivery.objects.filter(pk__in=ids).update(enqueued_at=now, updated_at=now)
    return ids


def deliveries_unclaim(*, message_ids: Collection[int]) -> None:
    """Hand claimed rows back unpublished for the next sweep (the broker is still down)."""
    Delivery.objects.filter(pk__in=list(message_ids)).update(enqueued_at=None, updated_at=timezone.now())


def deliveries_queued(*, conversation_id: int) -> bool:
    """Whether any message of the conversation is still waiting to reach the customer."""
    return Delivery.objects.filter(
        message__conversation_id=conversation_id, status=Delivery.Status.QUEUED
    ).exists()
