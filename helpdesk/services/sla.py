"""Marking missed SLA targets (helpdesk.selectors.sla computes them): the beat's sweep records each missed
target once (a SlaBreach row per conversation, kind and due time; its unique constraint settles two sweeps
running at once), writes an activity line, tells the assignee (else the escalation audience) and raises the
`sla_breached` automation event."""

from __future__ import annotations

import logging
import time
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from helpdesk.models import AutomationEvent, Conversation, SlaBreach, SlaPolicy
from helpdesk.selectors.sla import SlaTarget, sla_targets

from .activities import message_create_activity
from .automation import automation_event
from .notifications import notify_sla_breached

logger = logging.getLogger(__name__)

SWEEP_BATCH = 500
"""Conversations read per query; a sweep goes through every open one, batch after batch, by id."""
SWEEP_BUDGET_SECONDS = 40.0
"""A sweep stops after this (the next minute's starts again from the first id): never two sweeps' worth of work."""


def _record(conversation: Conversation, kind: str, due_at: datetime) -> bool:
    """True when this sweep recorded the breach (False: another sweep or an earlier one did)."""
    try:
        with transaction.atomic():
            SlaBreach.objects.create(
                account_id=conversation.account_id,
                conversation=conversation,
                policy_id=conversation.inbox.sla_policy_id,
                kind=kind,
                due_at=due_at,
            )
    except IntegrityError:
        return False
    return True


def sla_breaches_mark(*, now: datetime | None = None) -> int:
    """Record every target missed by `now` on conversations people have; returns how many were new."""
    now = now or timezone.now()
    started, last_pk, recorded = time.monotonic(), 0, 0
    candidates = Conversation.objects.filter(
        status__in=[Conversation.Status.OPEN, Conversation.Status.SNOOZED], inbox__sla_policy__isnull=False
    ).select_related("inbox__sla_policy", "inbox__account", "contact", "assignee")
    while time.monotonic() - started < SWEEP_BUDGET_SECONDS:
        batch = {c.pk: c for c in candidates.filter(pk__gt=last_pk).order_by("pk")[:SWEEP_BATCH]}
        if not batch:
            break
        last_pk = max(batch)
        for conversation_id, targets in sla_targets(batch.values()).items():
            recorded += _mark(batch[conversation_id], targets, now)
    if recorded:
        logger.info("SLA sweep recorded %s missed targets", recorded)
    return recorded


def _mark(conversation: Conversation, targets: list[SlaTarget], now: datetime) -> int:
    recorded = 0
    for target in targets:
        if not (target.open and target.due_at <= now) or not _record(
            conversation, target.kind, target.due_at
        ):
            continue
        recorded += 1
        what = f"{SlaBreach.Kind(target.kind).label} missed (due {target.due_at:%Y-%m-%d %H:%M} UTC)."
        with transaction.atomic():
            message_create_activity(conversation=conversation, content=f"SLA: {what}")
            notify_sla_breached(conversation=conversation, what=f"SLA {what}")
            automation_event(event=AutomationEvent.SLA_BREACHED, conversation_id=conversation.pk)
    return recorded


def sla_policy_create(
    *,
    account_id: int,
    name: str,
    first_response_minutes: int | None = None,
    next_response_minutes: int | None = None,
    resolution_minutes: int | None = None,
    business_hours_only: bool = True,
) -> SlaPolicy:
    """A new policy of the account: at least one target (ValidationError), a name of its own (IntegrityError)."""
    policy = SlaPolicy(
        account_id=account_id,
        name=name,
        first_response_minutes=first_response_minutes,
        next_response_minutes=next_response_minutes,
        resolution_minutes=resolution_minutes,
        business_hours_only=business_hours_only,
    )
    policy.clean()
    with transaction.atomic():
        policy.save()
    return policy
