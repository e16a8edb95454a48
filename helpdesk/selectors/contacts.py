"""The contact panel of the conversation page: who the customer is (profile, the ids the channels know them
by) and their other conversations, in a fixed number of queries however long their history is."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import OuterRef, Subquery

from helpdesk.models import Contact, ContactInbox, Conversation, Message

PAST_CONVERSATIONS = 10
LAST_WORDS_CHARS = 120


@dataclass(frozen=True)
class ChannelId:
    inbox_name: str
    channel_type: str
    source_id: str


@dataclass(frozen=True)
class PastConversation:
    id: int
    status: str
    status_display: str
    last_activity_at: datetime
    last_words: str


@dataclass(frozen=True)
class ContactPanel:
    contact: Contact
    channel_ids: list[ChannelId]
    past: list[PastConversation]
    more_past: bool
    """The contact has more conversations than the panel lists."""


def latest_incoming_content() -> Subquery:
    """The customer's latest message of the outer conversation (a correlated subquery on the index
    (conversation, created_at)); shared with the lists' previews."""
    return Subquery(
        Message.objects.filter(
            conversation_id=OuterRef("pk"), message_type=Message.Type.INCOMING, private=False
        )
        .order_by("-id")
        .values("content")[:1]
    )


def contact_panel(*, account_id: int, conversation: Conversation) -> ContactPanel:
    """Profile, channel ids (1 query) and the latest other conversations with the customer's last words in each
    (1 query). Scoped by the account as well as the contact, so a row of another tenant can never appear."""
    contact = conversation.contact
    channel_ids = [
        ChannelId(inbox_name=name, channel_type=channel_type, source_id=source_id)
        for name, channel_type, source_id in ContactInbox.objects.filter(
            contact_id=contact.pk, inbox__account_id=account_id
        )
        .order_by("inbox__name", "pk")
        .values_list("inbox__name", "inbox__channel_type", "source_id")[:20]
    ]
    rows = list(
        Conversation.objects.filter(account_id=account_id, contact_id=contact.pk)
        .exclude(pk=conversation.pk)
        .annotate(last_words=latest_incoming_content())
        .order_by("-last_activity_at", "-pk")
        .values("pk", "status", "last_activity_at", "last_words")[: PAST_CONVERSATIONS + 1]
    )
    labels = dict(Conversation.Status.choices)
    past = [
        PastConversation(
            id=row["pk"],
            status=row["status"],
            status_display=labels.get(row["status"], row["status"]),
            last_activity_at=row["last_activity_at"],
            last_words=(row["last_words"] or "")[:LAST_WORDS_CHARS],
        )
        for row in rows[:PAST_CONVERSATIONS]
    ]
    return ContactPanel(
        contact=contact, channel_ids=channel_ids, past=past, more_past=len(rows) > PAST_CONVERSATIONS
    )
