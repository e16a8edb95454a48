"""Conversations that go quiet: snoozes that end, customers who never answered, and conversations the AI is
handling that the AI should judge (resolved, or handed to people).

Every sweep here is safe to run concurrently and again: each conversation is changed under its row lock after
the conditions that selected it are checked again, so two sweeps (or a sweep and a customer's message) never
change one conversation twice. Each sweep handles a bounded batch, oldest first; the next beat tick takes the
rest.

The AI's judgement is captain's work: helpdesk only finds the quiet conversations, claims each quiet period
once (a Redis key named for the conversation and its `last_activity_at`, which any new message changes) and asks
the AI responder's `judge_quiet_conversation` hook, so helpdesk never imports captain.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache

import redis
from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, QuerySet, Subquery
from django.utils import timezone

from helpdesk.models import Account, Conversation, Message

from .activities import message_create_activity
from .conversations import conversation_set_status

logger = logging.getLogger(__name__)

QUIET_CLAIM_SECONDS = 1800
"""How long a claimed quiet period is not asked about again. Longer than a judgement can take (one model call
within the task's time limit, plus a queue wait); a judgement lost with its worker is asked again after it."""

ACTOR = "Auto-resolve"


# ---- snooze -------------------------------------------------------------------------------------------------


def snoozed_due(*, now: datetime, limit: int) -> list[int]:
    """Snoozed conversations whose wake-up time has come, earliest first."""
    return list(
        Conversation.objects.filter(status=Conversation.Status.SNOOZED, snoozed_until__lte=now)
        .order_by("snoozed_until", "id")
        .values_list("id", flat=True)[:limit]
    )


@transaction.atomic
def conversation_wake(*, conversation_id: int, now: datetime) -> bool:
    """Wake one snoozed conversation whose time has come: open again, with an activity line. False when it is
    no longer due (woken by the customer, re-snoozed, resolved) by the time its row is locked."""
    conversation = (
        Conversation.objects.select_for_update(no_key=True)
        .filter(pk=conversation_id, status=Conversation.Status.SNOOZED, snoozed_until__lte=now)
        .first()
    )
    if conversation is None:
        return False
    conversation.status = Conversation.Status.OPEN
    conversation.snoozed_until = None
    # The save publishes the dashboard event (helpdesk.realtime.signals).
    conversation.save(update_fields=["status", "snoozed_until"])
    message_create_activity(
        conversation=conversation, content="The snooze ended: the conversation is open again."
    )
    return True


def snoozed_wake_due(*, limit: int, now: datetime | None = None) -> int:
    """The snooze sweep: wake up to `limit` due conversations; returns how many were woken."""
    now = now or timezone.now()
    return sum(conversation_wake(conversation_id=pk, now=now) for pk in snoozed_due(now=now, limit=limit))


# ---- waiting on the customer ----------------------------------------------------------------------------------


def _last_public_sender() -> Subquery:
    """Per outer conversation: the sender type of its newest public message (a customer's, a person's, the AI's);
    activity lines and notes do not count."""
    return Subquery(
        Message.objects.filter(conversation_id=OuterRef("pk"), private=False)
        .exclude(message_type=Message.Type.ACTIVITY)
        .order_by("-created_at", "-id")
        .values("sender_type")[:1]
    )


def _activity_since(cutoff: datetime) -> Exists:
    """Per outer conversation: any message at all (activity lines and notes included) after `cutoff`. Excluded
    by the sweeps: a status change, a woken snooze or a note restarts the clock, so a conversation handed back to
    the AI or woken from a long snooze is not judged or resolved the moment it comes back."""
    return Exists(Message.objects.filter(conversation_id=OuterRef("pk"), created_at__gt=cutoff))


def _thresholds(field: str) -> list[int]:
    """The values accounts use for an auto-resolve setting (NULL = off is left out), smallest first. Accounts share
    a handful of values, so a sweep runs one query per value (joined on the account's setting) rather than date
    arithmetic on a joined column, which SQLite and PostgreSQL spell differently."""
    values = Account.objects.filter(**{f"{field}__isnull": False}).values_list(field, flat=True).distinct()
    return sorted({int(v) for v in values})


def _waiting_query(*, hours: int, cutoff: datetime) -> QuerySet[Conversation]:
    """Open conversations of the accounts resolving after `hours`, where people answered last (nobody is waiting
    for them) and nothing happened since `cutoff`."""
    return (
        Conversation.objects.filter(
            account__auto_resolve_waiting_after_hours=hours,
            status=Conversation.Status.OPEN,
            waiting_since__isnull=True,
            last_activity_at__lte=cutoff,
        )
        .exclude(_activity_since(cutoff))
        .annotate(last_sender=_last_public_sender())
        .filter(last_sender=Message.SenderType.USER)
    )


def waiting_due(*, now: datetime, limit: int) -> list[tuple[int, int]]:
    """(conversation id, hours) of conversations waiting on the customer longer than their account allows,
    oldest first within each threshold, at most `limit`."""
    found: list[tuple[int, int]] = []
    for hours in _thresholds("auto_resolve_waiting_after_hours"):
        if len(found) >= limit:
            break
        ids = _waiting_query(hours=hours, cutoff=now - timedelta(hours=hours)).order_by(
            "last_activity_at", "id"
        )
        found += [(pk, hours) for pk in ids.values_list("id", flat=True)[: limit - len(found)]]
    return found


@transaction.atomic
def conversation_resolve_waiting(*, conversation_id: int, hours: int, now: datetime) -> bool:
    """Resolve one conversation the customer left unanswered for `hours` (resolved_by=inactivity), with an
    activity line saying why. Checked again under the row lock: a customer message or a change of setting
    since the sweep selected it leaves it alone (False)."""
    locked = Conversation.objects.select_for_update(no_key=True).filter(pk=conversation_id).first()
    if locked is None:
        return False
    # The account's setting is part of the query: a setting changed since the sweep selected it applies.
    still_due = _waiting_query(hours=hours, cutoff=now - timedelta(hours=hours)).filter(pk=conversation_id)
    if not still_due.exists():
        return False
    conversation_set_status(
        conversation=locked,
        status=Conversation.Status.RESOLVED,
        actor=ACTOR,
        resolved_by=Conversation.ResolvedBy.INACTIVITY,
    )
    message_create_activity(
        conversation=locked,
        content=f"Resolved automatically: the customer has not replied for {_hours_text(hours)}.",
    )
    return True


def waiting_resolve_due(*, limit: int, now: datetime | None = None) -> int:
    """The waiting-customer sweep: resolve up to `limit` conversations; returns how many were resolved."""
    now = now or timezone.now()
    return sum(
        conversation_resolve_waiting(conversation_id=pk, hours=hours, now=now)
        for pk, hours in waiting_due(now=now, limit=limit)
    )


def _hours_text(hours: int) -> str:
    return "1 hour" if hours == 1 else f"{hours} hours"


# ---- quiet conversations the AI is handling ---------------------------------------------------------------------


@dataclass(frozen=True)
class QuietConversation:
    conversation_id: int
    quiet_since: datetime
    """Its `last_activity_at` when selected: names the quiet period (any new message changes it)."""


def quiet_ai_due(*, now: datetime, limit: int) -> list[QuietConversation]:
    """Conversations the AI is handling (pending) that have been quiet longer than their account's
    `auto_resolve_ai_after_minutes`, oldest first within each threshold, at most `limit`."""
    found: list[QuietConversation] = []
    for minutes in _thresholds("auto_resolve_ai_after_minutes"):
        if len(found) >= limit:
            break
        cutoff = now - timedelta(minutes=minutes)
        rows = (
            Conversation.objects.filter(
                account__auto_resolve_ai_after_minutes=minutes,
                status=Conversation.Status.PENDING,
                last_activity_at__lte=cutoff,
            )
            .exclude(_activity_since(cutoff))
            .order_by("last_activity_at", "id")
            .values_list("id", "last_activity_at")[: limit - len(found)]
        )
        found += [QuietConversation(pk, at) for pk, at in rows]
    return found


@cache
def _redis() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=5)


def _claim_key(conversation_id: int, quiet_since: datetime) -> str:
    return f"helpdesk:auto-resolve:{conversation_id}:{quiet_since.timestamp():.6f}"


def quiet_claim(*, conversation_id: int, quiet_since: datetime) -> bool:
    """Claim one quiet period for judgement (SET NX): True for exactly one caller per period while the claim
    lives, so two sweeps, or a sweep while a judgement is queued, never ask the AI twice."""
    return bool(_redis().set(_claim_key(conversation_id, quiet_since), "1", nx=True, ex=QUIET_CLAIM_SECONDS))


def quiet_claim_release(*, conversation_id: int, quiet_since: datetime) -> None:
    """Give a claimed period back (its judgement could not be queued, or was put off because an AI run was in
    progress), so the next sweep asks again instead of after QUIET_CLAIM_SECONDS."""
    _redis().delete(_claim_key(conversation_id, quiet_since))


def quiet_ai_judge_due(*, judge: Callable[..., bool], limit: int, now: datetime | None = None) -> int:
    """The quiet-AI sweep: claim up to `limit` quiet periods and ask `judge(conversation_id=, quiet_since=)`
    (the AI responder's hook, which queues the judgement and returns whether it did) about each; returns how
    many were queued. A Redis outage ends the sweep quietly: the next tick tries again."""
    now = now or timezone.now()
    queued = 0
    for quiet in quiet_ai_due(now=now, limit=limit):
        try:
            if not quiet_claim(conversation_id=quiet.conversation_id, quiet_since=quiet.quiet_since):
                continue
        except redis.RedisError:
            logger.warning(
                "auto-resolve: Redis unavailable, quiet conversations are judged at the next sweep"
            )
            break
        if judge(conversation_id=quiet.conversation_id, quiet_since=quiet.quiet_since):
            queued += 1
        else:
            quiet_claim_release(conversation_id=quiet.conversation_id, quiet_since=quiet.quiet_since)
    return queued
