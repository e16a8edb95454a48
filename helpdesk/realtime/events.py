"""The dashboard events the helpdesk publishes, built in one place so every writer sends the same small facts.

Only ids and short state (status, inbox, assignee, team, message type): never message text, contact details or
secrets. The page asks the ordinary, access-checked views for anything else. Each is published after the
transaction commits (publish.py), so a rolled back change says nothing.
"""

from __future__ import annotations

from typing import Any

from helpdesk.models import Conversation, Delivery, Message

from .publish import publish_after_commit


def conversation_facts(conversation: Conversation) -> dict[str, Any]:
    return {
        "conversation_id": conversation.pk,
        "inbox_id": conversation.inbox_id,
        "status": conversation.status,
        "assignee_id": conversation.assignee_id,
        "team_id": conversation.team_id,
        "priority": conversation.priority,
    }


def conversation_changed(conversation: Conversation, *, change: str) -> None:
    """`change`: created, updated, assignee, priority, labels."""
    publish_after_commit(
        conversation.account_id,
        {"type": "conversation", "change": change, **conversation_facts(conversation)},
    )


def message_added(message: Message) -> None:
    publish_after_commit(
        message.account_id,
        {
            "type": "message",
            "conversation_id": message.conversation_id,
            "inbox_id": message.inbox_id,
            "message_id": message.pk,
            "message_type": message.message_type,
            "private": message.private,
        },
    )


def delivery_changed(*, message_id: int) -> None:
    """A reply's delivery status changed (sent, retrying, failed): the conversation page shows it."""
    row = (
        Delivery.objects.filter(pk=message_id)
        .values("status", "message__account_id", "message__conversation_id")
        .first()
    )
    if row is None:
        return
    publish_after_commit(
        row["message__account_id"],
        {
            "type": "delivery",
            "conversation_id": row["message__conversation_id"],
            "message_id": message_id,
            "status": row["status"],
        },
    )
