"""Where a conversation stands against its inbox's SLA policy, computed from the conversation's own facts (no
state kept in step with every reply): when it was handed to people, people's replies, the customer's messages,
its resolution. The list, the conversation page and the breach sweep (helpdesk.services.sla) all read it here.

- first response: due `first_response_minutes` after it was handed to people (the AI's handoff, or its start on
  an inbox without AI); met by the first public reply of a person (not the AI's, not a note).
- next response: once people have replied, due `next_response_minutes` after a customer message people have not
  answered yet; met by their next reply.
- resolution: due `resolution_minutes` after it was handed to people; met when resolved.
With `business_hours_only`, only the inbox's business hours count (helpdesk.business_hours.add_open_minutes).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from helpdesk.business_hours import add_open_minutes
from helpdesk.models import Conversation, Message, SlaBreach, SlaPolicy

from .business_hours import inbox_hours


@dataclass(frozen=True)
class SlaTarget:
    kind: str  # SlaBreach.Kind
    due_at: datetime
    met_at: datetime | None

    def breached(self, now: datetime) -> bool:
        return (self.met_at or now) > self.due_at

    @property
    def open(self) -> bool:
        return self.met_at is None


def _due(conversation: Conversation, policy: SlaPolicy, start: datetime, minutes: int) -> datetime | None:
    setting = inbox_hours(conversation.inbox) if policy.business_hours_only else None
    if setting is None:
        return start + timedelta(minutes=minutes)
    return add_open_minutes(*setting, start, minutes)


def _facts(ids: list[int]) -> dict[int, dict[str, datetime | None]]:
    """Per conversation, in one query: the customer's last message, people's last public reply, and people's
    first public reply since the conversation was handed to them."""
    mine = Message.objects.filter(conversation=OuterRef("pk"))
    people = mine.filter(
        message_type=Message.Type.OUTGOING, private=False, sender_type=Message.SenderType.USER
    )
    handed = Coalesce(OuterRef("escalated_at"), OuterRef("created_at"))
    rows = (
        Conversation.objects.filter(pk__in=ids)
        .values("pk")
        .annotate(
            last_customer=Subquery(
                mine.filter(message_type=Message.Type.INCOMING)
                .order_by("-created_at")
                .values("created_at")[:1]
            ),
            last_people=Subquery(people.order_by("-created_at").values("created_at")[:1]),
            first_people=Subquery(
                people.filter(created_at__gte=handed).order_by("created_at").values("created_at")[:1]
            ),
        )
    )
    return {row["pk"]: row for row in rows}


def sla_targets(conversations: Iterable[Conversation]) -> dict[int, list[SlaTarget]]:
    """Each conversation's SLA targets (none while the AI has it or its inbox has no policy). Conversations should
    come with `inbox__sla_policy` and `inbox__account` selected."""
    chosen = [
        c
        for c in conversations
        if c.inbox.sla_policy_id is not None and c.status != Conversation.Status.PENDING
    ]
    facts = _facts([c.pk for c in chosen])
    result: dict[int, list[SlaTarget]] = {}
    for conversation in chosen:
        policy = conversation.inbox.sla_policy
        assert policy is not None
        handed = conversation.escalated_at or conversation.created_at
        fact = facts.get(conversation.pk, {})
        targets: list[SlaTarget] = []
        first_reply = fact.get("first_people")
        if policy.first_response_minutes and (
            due := _due(conversation, policy, handed, policy.first_response_minutes)
        ):
            targets.append(SlaTarget(SlaBreach.Kind.FIRST_RESPONSE, due, first_reply))
        last_customer, last_people = fact.get("last_customer"), fact.get("last_people")
        waiting = last_customer is not None and last_people is not None and last_customer > last_people
        if policy.next_response_minutes and waiting and last_people and last_people >= handed:
            assert last_customer is not None
            if due := _due(conversation, policy, last_customer, policy.next_response_minutes):
                targets.append(SlaTarget(SlaBreach.Kind.NEXT_RESPONSE, due, None))
        if policy.resolution_minutes and (
            due := _due(conversation, policy, handed, policy.resolution_minutes)
        ):
            resolved = (
                conversation.resolved_at if conversation.status == Conversation.Status.RESOLVED else None
            )
            targets.append(SlaTarget(SlaBreach.Kind.RESOLUTION, due, resolved))
        result[conversation.pk] = targets
    return result


def sla_label_target(targets: list[SlaTarget]) -> SlaTarget | None:
    """The target a list row shows: the earliest one still open."""
    pending = [t for t in targets if t.open]
    return min(pending, key=lambda t: t.due_at) if pending else None


@dataclass(frozen=True)
class SlaLabel:
    """What the list and the conversation page show: "First response due in 12 minutes" / "... missed"."""

    kind: str
    due_at: datetime
    overdue: bool


def sla_labels(conversations: Iterable[Conversation], *, now: datetime | None = None) -> dict[int, SlaLabel]:
    """The SLA label of each conversation that has an open target."""
    now = now or timezone.now()
    labels = {}
    for conversation_id, targets in sla_targets(conversations).items():
        target = sla_label_target(targets)
        if target is not None:
            kind = str(SlaBreach.Kind(target.kind).label)
            labels[conversation_id] = SlaLabel(kind=kind, due_at=target.due_at, overdue=target.due_at <= now)
    return labels


def sla_breach_rates(
    *, account_id: int, since: datetime, until: datetime | None = None
) -> list[dict[str, object]]:
    """Per policy: conversations handed to people in the period on its inboxes, and how many missed a target."""
    until = until or timezone.now()
    rates = []
    for policy in SlaPolicy.objects.filter(account_id=account_id).order_by("name"):
        handed = Conversation.objects.filter(
            inbox__sla_policy=policy, created_at__gte=since, created_at__lt=until
        )
        total = handed.count()
        breached = handed.filter(sla_breaches__isnull=False).distinct().count()
        rates.append(
            {
                "policy": policy.name,
                "conversations": total,
                "breached": breached,
                "rate": round(breached / total, 3) if total else None,
            }
        )
    return rates


def account_sla_policies(*, account_id: int) -> QuerySet[SlaPolicy]:
    return SlaPolicy.objects.filter(account_id=account_id).order_by("name", "pk")
