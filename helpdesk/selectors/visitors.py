"""What a customer sees of their own conversations on one inbox (the website widget's visitor API reads this).

The customer is named by the channel's source id on the inbox (a `ContactInbox`), never by a contact id from the
request: a visitor only ever reads the conversations of the source id their token carries. Private notes and
activities are never part of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from helpdesk.channels.outbound_files import outbound_files, shared_file_url
from helpdesk.models import Conversation, Message

MAX_MESSAGES = 200


@dataclass(frozen=True)
class CustomerMessage:
    id: int
    conversation_id: int
    incoming: bool
    """Written by the customer (else a reply to them)."""
    text: str
    sender_name: str
    """The agent's or the AI agent's name; empty for the customer's own messages."""
    suggestions: list[str]
    created_at: str
    files: list[dict[str, str]] = field(default_factory=list)
    """Files a person attached to a reply: `{"name", "url"}`, the url a signed link that opens it (no login); the
    customer's own stored files by name, with an empty url."""


def customer_conversation_ids(*, inbox_id: int, source_id: str) -> list[int]:
    return list(
        Conversation.objects.filter(
            contact_inbox__inbox_id=inbox_id, contact_inbox__source_id=source_id
        ).values_list("id", flat=True)
    )


def customer_messages(*, inbox_id: int, source_id: str, after_id: int = 0) -> list[CustomerMessage]:
    """The customer's and the replies' messages after `after_id`, oldest first (at most MAX_MESSAGES)."""
    rows = (
        Message.objects.filter(
            inbox_id=inbox_id,
            conversation__contact_inbox__source_id=source_id,
            private=False,
            message_type__in=(Message.Type.INCOMING, Message.Type.OUTGOING),
            id__gt=after_id,
        )
        .select_related("sender_user")
        .order_by("id")[:MAX_MESSAGES]
    )
    return [
        CustomerMessage(
            id=row.id,
            conversation_id=row.conversation_id,
            incoming=row.message_type == Message.Type.INCOMING,
            text=row.content,
            sender_name=_sender_name(row),
            suggestions=[str(s) for s in row.quick_replies] if isinstance(row.quick_replies, list) else [],
            created_at=row.created_at.isoformat(),
            files=_reply_files(row),
        )
        for row in rows
    ]


def _reply_files(message: Message) -> list[dict[str, str]]:
    # The customer's own files are named only (no link: they have the file, and a shared link opens a reply's
    # file alone, helpdesk.services.reply_files.shared_file_access).
    if message.message_type != Message.Type.OUTGOING:
        return [{"name": f.file_name, "url": ""} for f in outbound_files(message)]
    return [{"name": f.file_name, "url": shared_file_url(f.attachment_id)} for f in outbound_files(message)]


def _sender_name(message: Message) -> str:
    if message.message_type == Message.Type.INCOMING:
        return ""
    if message.sender_user is not None:
        return message.sender_user.get_full_name() or message.sender_user.get_username()
    return message.ai_agent_name
