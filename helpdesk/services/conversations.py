"""Changing a conversation: escalate to people, status, labels, priority, assignee."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, overload

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from helpdesk.models import Conversation, Label, Message, Team
from helpdesk.realtime.events import conversation_changed

from .activities import message_create_activity
from .assignment import conversation_auto_assign
from .csat import csat_request_after_resolution
from .messages import ai_taken_over, message_create_note
from .notifications import notify_assigned, notify_escalated


@transaction.atomic
def conversation_escalate(
    *,
    conversation: Conversation,
    reason: str,
    customer_message: str,
    priority: str | None = None,
    by: str = "The AI",
    team_id: int | None = None,
) -> Message | None:
    """Hand the conversation to people: status `open`, the reason kept as a private note, the customer told.

    `reason` is what the people who pick it up read (plain language; the AI's internals stay in its debug log).
    `team_id` names the team that picks it up: the conversation is assigned round-robin among its available
    members (helpdesk.services.assignment), and whoever should know is notified.

    Returns the outgoing message to the customer (queued for delivery), or None if there was nothing to say.
    """
    from .messages import (
        message_create_ai_reply,
    )  # local: both modules are small and import each other's names

    conversation = Conversation.objects.select_for_update(no_key=True).get(pk=conversation.pk)
    now = timezone.now()
    conversation.status = Conversation.Status.OPEN
    conversation.waiting_since = conversation.waiting_since or now
    conversation.escalated_at = conversation.escalated_at or now
    conversation.escalation_reason = reason[:2000]
    conversation.snoozed_until = None
    fields = ["status", "waiting_since", "escalated_at", "escalation_reason", "snoozed_until"]
    if priority and priority in Conversation.Priority.values:
        conversation.priority = priority
        fields.append("priority")
    if team_id is not None and Team.objects.filter(pk=team_id, account_id=conversation.account_id).exists():
        conversation.team_id = team_id
        fields.append("team")
    conversation.save(update_fields=fields)
    message_create_note(conversation=conversation, content=f"Handoff reason: {reason}")
    message_create_activity(conversation=conversation, content=f"{by} handed the conversation to the team.")
    assignee = conversation_auto_assign(conversation=conversation)
    notify_escalated(conversation=conversation, assignee=assignee)
    if not customer_message.strip():
        return None
    return message_create_ai_reply(
        conversation=conversation, content=customer_message, agent_key="", agent_name="Handoff", answer=False
    )


@transaction.atomic
def conversation_set_status(
    *,
    conversation: Conversation,
    status: str,
    actor: User | str,
    resolved_by: str = "",
    snoozed_until: datetime | None = None,
) -> Conversation:
    """Change the status. Resolving records when and by whom (`resolved_by`: a person when `actor` is a user,
    else the AI unless given) and asks for a rating when the inbox does (after commit); snoozing needs
    `snoozed_until` (the sweep or the customer's next message wakes it)."""
    if status not in Conversation.Status.values:
        raise ValueError(f"Unknown status {status!r}")
    if status == Conversation.Status.SNOOZED and snoozed_until is None:
        raise ValueError("Snoozing needs a wake-up time.")
    conversation = Conversation.objects.select_for_update(no_key=True).get(pk=conversation.pk)
    if conversation.status == status and status != Conversation.Status.SNOOZED:
        return conversation
    previous = conversation.status
    conversation.status = status
    fields = ["status", "snoozed_until"]
    conversation.snoozed_until = snoozed_until if status == Conversation.Status.SNOOZED else None
    if status == Conversation.Status.RESOLVED:
        conversation.resolved_at = timezone.now()
        conversation.resolved_by = resolved_by or (
            Conversation.ResolvedBy.AGENT if isinstance(actor, User) else Conversation.ResolvedBy.AI
        )
        fields += ["resolved_at", "resolved_by"]
    elif previous == Conversation.Status.RESOLVED:
        # Reopened: the next resolution is measured again.
        conversation.resolved_at = None
        conversation.resolved_by = ""
        fields += ["resolved_at", "resolved_by"]
    if status in (Conversation.Status.RESOLVED, Conversation.Status.PENDING):
        conversation.waiting_since = None
        fields.append("waiting_since")
    if status == Conversation.Status.PENDING:
        # Handing back to the AI starts again at triage.
        conversation.ai_agent_key = ""
        fields.append("ai_agent_key")
    conversation.save(update_fields=fields)
    if status == Conversation.Status.SNOOZED:
        until = timezone.localtime(snoozed_until).strftime("%Y-%m-%d %H:%M %Z")
        message_create_activity(
            conversation=conversation, content=f"{actor} snoozed the conversation until {until}."
        )
    else:
        message_create_activity(
            conversation=conversation, content=f"{actor} changed the status from {previous} to {status}."
        )
    if status == Conversation.Status.RESOLVED:
        conversation_id = conversation.pk
        transaction.on_commit(lambda: csat_request_after_resolution(conversation_id=conversation_id))
    if (
        previous == Conversation.Status.PENDING
        and status == Conversation.Status.OPEN
        and isinstance(actor, User)
    ):
        ai_taken_over(conversation=conversation)
    return conversation


@overload
def conversation_add_label(
    *, conversation: Conversation, name: str, create: Literal[True] = True
) -> Label: ...
@overload
def conversation_add_label(*, conversation: Conversation, name: str, create: bool) -> Label | None: ...
def conversation_add_label(*, conversation: Conversation, name: str, create: bool = True) -> Label | None:
    """Put a label on the conversation. With `create=False` only one of the account's existing labels (None
    when there is no such label): the AI may use the team's labels but not invent new ones."""
    label: Label | None
    if create:
        label, _ = Label.objects.get_or_create(account_id=conversation.account_id, name=name)
    else:
        label = Label.objects.filter(account_id=conversation.account_id, name=name).first()
        if label is None:
            return None
    conversation.labels.add(label)
    return label


def conversation_remove_label(*, conversation: Conversation, name: str) -> bool:
    """Take a label off the conversation (the label itself stays for the account). False if it was not on it."""
    label = Label.objects.filter(account_id=conversation.account_id, name=name).first()
    if label is None or not conversation.labels.filter(pk=label.pk).exists():
        return False
    conversation.labels.remove(label)
    return True


def conversation_set_priority(*, conversation: Conversation, priority: str) -> None:
    if priority not in Conversation.Priority.values:
        raise ValueError(f"Unknown priority {priority!r}")
    Conversation.objects.filter(pk=conversation.pk).update(priority=priority)
    conversation.priority = priority
    conversation_changed(conversation, change="priority")  # .update() sends no signal


def conversation_assign(*, conversation: Conversation, assignee: User | None, by: User | None = None) -> None:
    """Assign to a person (or nobody). The new assignee is notified unless they assigned themselves."""
    previous = conversation.assignee_id
    Conversation.objects.filter(pk=conversation.pk).update(assignee=assignee)
    conversation.assignee = assignee
    conversation_changed(conversation, change="assignee")  # .update() sends no signal
    if assignee is not None and assignee.pk != previous and (by is None or by.pk != assignee.pk):
        notify_assigned(conversation=conversation, assignee=assignee, by=by)
