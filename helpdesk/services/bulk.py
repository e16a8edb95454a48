"""One action on many conversations at once (the dashboard's bulk select): each conversation goes through the
same service as a one-at-a-time action, so it gets the same activity line, live event and notifications.

Bounded: at most BULK_LIMIT conversations per request, applied in batches of BATCH_SIZE, one transaction per
batch (a failure undoes only its own batch, and locks are never held for the whole selection). Conversations
of another account are simply not found.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import User
from django.db import transaction

from helpdesk.models import Conversation, Team
from helpdesk.selectors.visibility import visible_conversations_q

from .conversations import (
    conversation_add_label,
    conversation_assign,
    conversation_set_priority,
    conversation_set_status,
    conversation_set_team,
)

BULK_LIMIT = 1000
BATCH_SIZE = 50


class BulkTooLarge(ValueError):
    """More conversations than BULK_LIMIT were selected."""


@dataclass(frozen=True)
class BulkAction:
    """What to do to each conversation: `kind` is resolve, assign, label, snooze, priority or team."""

    kind: str
    assignee: User | None = None
    """assign: the person (None: nobody)."""
    label: str = ""
    """label: the label's name (created in the account when new, as one at a time does)."""
    snoozed_until: datetime | None = None
    """snooze: the wake-up time."""
    priority: str = ""
    """priority: one of Conversation.Priority."""
    team: Team | None = None
    """team: one of the account's teams (None: no team)."""


@dataclass(frozen=True)
class BulkResult:
    changed: int
    """Conversations the action was applied to."""
    batches: int
    not_found: int
    """Ids that are not conversations of this account."""


KINDS = ("resolve", "assign", "label", "snooze", "priority", "team")


def _apply_one(*, conversation: Conversation, action: BulkAction, actor: User) -> None:
    if action.kind == "resolve":
        conversation_set_status(conversation=conversation, status=Conversation.Status.RESOLVED, actor=actor)
    elif action.kind == "assign":
        conversation_assign(conversation=conversation, assignee=action.assignee, by=actor)
    elif action.kind == "label":
        conversation_add_label(conversation=conversation, name=action.label, by=actor)
    elif action.kind == "snooze":
        conversation_set_status(
            conversation=conversation,
            status=Conversation.Status.SNOOZED,
            actor=actor,
            snoozed_until=action.snoozed_until,
        )
    elif action.kind == "priority":
        conversation_set_priority(conversation=conversation, priority=action.priority, by=actor)
    elif action.kind == "team":
        conversation_set_team(conversation=conversation, team=action.team, by=actor)


def conversations_bulk_apply(
    *, account_id: int, conversation_ids: list[int], action: BulkAction, actor: User
) -> BulkResult:
    """Apply `action` to the account's conversations among `conversation_ids`, in id order, batch by batch."""
    if action.kind not in KINDS:
        raise ValueError(f"Unknown bulk action {action.kind!r}")
    if action.kind == "snooze" and action.snoozed_until is None:
        raise ValueError("Snoozing needs a wake-up time.")
    if action.kind == "priority" and action.priority not in Conversation.Priority.values:
        raise ValueError(f"Unknown priority {action.priority!r}")
    if action.kind == "team" and action.team is not None and action.team.account_id != account_id:
        raise ValueError("That team is not one of this account's.")
    ids = sorted(set(conversation_ids))
    if len(ids) > BULK_LIMIT:
        raise BulkTooLarge(f"At most {BULK_LIMIT} conversations at once.")
    changed = batches = 0
    for start in range(0, len(ids), BATCH_SIZE):
        chunk = ids[start : start + BATCH_SIZE]
        with transaction.atomic():
            conversations = list(
                Conversation.objects.filter(account_id=account_id, pk__in=chunk)
                # Only those the person sees (their inboxes): the others count as not found.
                .filter(visible_conversations_q(account_id=account_id, user=actor))
                .order_by("pk")
            )
            for conversation in conversations:
                _apply_one(conversation=conversation, action=action, actor=actor)
        changed += len(conversations)
        batches += 1
    return BulkResult(changed=changed, batches=batches, not_found=len(ids) - changed)
