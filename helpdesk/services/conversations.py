"""Changing a conversation: escalate to people, status, labels, priority, assignee."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from helpdesk.models import Conversation, Label, Message

from .activities import message_create_activity
from .messages import ai_taken_over, message_create_note


@transaction.atomic
def conversation_escalate(
    *,
    conversation: Conversation,
    reason: str,
    customer_message: str,
    priority: str | None = None,
    by: str = "The AI",
) -> Message | None:
    """Hand the conversation to people: status `open`, the reason kept as a private note, the customer told.

    Returns the outgoing message to the customer (queued for delivery), or None if there was nothing to say.
    """
    from .messages import (
        message_create_ai_reply,
    )  # local: both modules are small and import each other's names

    conversation = Conversation.objects.select_for_update(no_key=True).get(pk=conversation.pk)
    conversation.status = Conversation.Status.OPEN
    conversation.waiting_since = conversation.waiting_since or timezone.now()
    conversation.escalation_reason = reason[:2000]
    fields = ["status", "waiting_since", "escalation_reason"]
    if priority and priority in Conversation.Priority.values:
        conversation.priority = priority
        fields.append("priority")
    conversation.save(update_fields=fields)
    message_create_note(conversation=conversation, content=f"Handoff reason: {reason}")
    message_create_activity(conversation=conversation, content=f"{by} handed the conversation to the team.")
    if not customer_message.strip():
        return None
    return message_create_ai_reply(
        conversation=conversation, content=customer_message, agent_key="", agent_name="Handoff"
    )


@transaction.atomic
def conversation_set_status(*, conversation: Conversation, status: str, actor: User | str) -> Conversation:
    if status not in Conversation.Status.values:
        raise ValueError(f"Unknown status {status!r}")
    conversation = Conversation.objects.select_for_update(no_key=True).get(pk=conversation.pk)
    if conversation.status == status:
        return conversation
    previous = conversation.status
    conversation.status = status
    fields = ["status"]
    if status in (Conversation.Status.RESOLVED, Conversation.Status.PENDING):
        conversation.waiting_since = None
        fields.append("waiting_since")
    if status == Conversation.Status.PENDING:
        # Handing back to the AI starts again at triage.
        conversation.ai_agent_key = ""
        fields.append("ai_agent_key")
    conversation.save(update_fields=fields)
    message_create_activity(
        conversation=conversation, content=f"{actor} changed the status from {previous} to {status}."
    )
    if (
        previous == Conversation.Status.PENDING
        and status == Conversation.Status.OPEN
        and isinstance(actor, User)
    ):
        ai_taken_over(conversation=conversation)
    return conversation


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


def conversation_assign(*, conversation: Conversation, assignee: User | None) -> None:
    Conversation.objects.filter(pk=conversation.pk).update(assignee=assignee)
    conversation.assignee = assignee
