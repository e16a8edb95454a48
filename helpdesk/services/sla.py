"""Marking missed SLA targets (helpdesk.selectors.sla computes them): the beat's sweep records each missed
target once (a SlaBreach row per conversation, kind and due time; its unique constraint settles two sweeps
running at once), writes an activity line, tells the assignee (else the escalation audience) and raises the
`sla_breached` automation event."""

from __future__ import annotations

import logging
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from helpdesk.models import AutomationEvent, Conversation, SlaBreach
from helpdesk.selectors.sla import sla_targets

from .activities import message_create_activity
from .automation import automation_event
from .notifications import notify_sla_breached

logger = logging.getLogger(__name__)

SWEEP_BATCH = 1000
"""Conversations one sweep looks at, oldest activity first; the next minute's sweep takes the rest."""


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
    conversations = list(
        Conversation.objects.filter(
            status__in=[Conversation.Status.OPEN, Conversation.Status.SNOOZED],
            inbox__sla_policy__isnull=False,
        )
        .select_related("inbox__sla_policy", "inbox__account", "contact", "assignee")
        .order_by("last_activity_at")[:SWEEP_BATCH]
    )
    recorded = 0
    for conversation_id, targets in sla_targets(conversations).items():
        conversation = next(c for c in conversations if c.pk == conversation_id)
        for target in targets:
            if not (target.open and target.due_at <= now):
                continue
            if not _record(conversation, target.kind, target.due_at):
                continue
            recorded += 1
            what = f"{SlaBreach.Kind(target.kind).label} missed (due {target.due_at:%Y-%m-%d %H:%M} UTC)."
            with transaction.atomic():
                message_create_activity(conversation=conversation, content=f"SLA: {what}")
                notify_sla_breached(conversation=conversation, what=f"SLA {what}")
                automation_event(event=AutomationEvent.SLA_BREACHED, conversation_id=conversation.pk)
    if recorded:
        logger.info("SLA sweep recorded %s missed targets", recorded)
    return recorded
