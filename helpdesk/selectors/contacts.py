"""The contact panel of the conversation page: who the customer is (profile, the ids the channels know them
by) and their other conversations, in a fixed number of queries however long their history is."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import Count, OuterRef, Q, QuerySet, Subquery

from helpdesk.models import Contact, ContactInbox, ContactNote, Conversation, Message

from .previews import files_preview
from .visibility import visible_conversations_q

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


def latest_incoming(field: str = "content") -> Subquery:
    """A field of the customer's latest message of the outer conversation (a correlated subquery on the index
    (conversation, created_at))."""
    return Subquery(
        Message.objects.filter(
            conversation_id=OuterRef("pk"), message_type=Message.Type.INCOMING, private=False
        )
        .order_by("-id")
        .values(field)[:1]
    )


def contact_panel(*, account_id: int, conversation: Conversation, user: Any | None = None) -> ContactPanel:
    """Profile, channel ids (1 query) and the latest other conversations with the customer's last words in each
    (1 query). Scoped by the account as well as the contact, so a row of another tenant can never appear, and to
    the conversations `user` sees (helpdesk.selectors.visibility)."""
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
        .filter(visible_conversations_q(account_id=account_id, user=user))
        .exclude(pk=conversation.pk)
        .annotate(last_words=latest_incoming("content"), last_files=latest_incoming("attachments"))
        .order_by("-last_activity_at", "-pk")
        .values("pk", "status", "last_activity_at", "last_words", "last_files")[: PAST_CONVERSATIONS + 1]
    )
    labels = dict(Conversation.Status.choices)
    past = [
        PastConversation(
            id=row["pk"],
            status=row["status"],
            status_display=labels.get(row["status"], row["status"]),
            last_activity_at=row["last_activity_at"],
            # Files alone (a photo without a caption) are named, as the lists' previews name them.
            last_words=(row["last_words"] or files_preview(row["last_files"]))[:LAST_WORDS_CHARS],
        )
        for row in rows[:PAST_CONVERSATIONS]
    ]
    return ContactPanel(
        contact=contact, channel_ids=channel_ids, past=past, more_past=len(rows) > PAST_CONVERSATIONS
    )


# ---- the contacts pages ----------------------------------------------------------------------------------------

CONTACTS_PAGE_SIZE = 25
SEARCH_MAX_CHARS = 200
"""Longer search text is refused with a message (helpdesk.views.contacts): no name, e-mail or phone is that long."""


def contacts_matching(*, account_id: int, query: str) -> QuerySet[Contact]:
    """The account's contacts whose name, e-mail or phone contains `query` (any case), or whose id it is
    (`12` or `#12`); newest first, each with its number of conversations."""
    return (
        contacts_filtered(account_id=account_id, query=query)
        .annotate(conversation_count=Count("conversations"))
        .order_by("-created_at", "-pk")
    )


def contacts_filtered(*, account_id: int, query: str) -> QuerySet[Contact]:
    """`contacts_matching` without the conversation counts (no join): for the search page."""
    contacts = Contact.objects.filter(account_id=account_id)
    # NUL taken out: PostgreSQL refuses it in a text parameter, and no name, e-mail or phone holds one.
    query = query.replace("\x00", "").strip()[:SEARCH_MAX_CHARS]
    if query:
        match = Q(name__icontains=query) | Q(email__icontains=query) | Q(phone__icontains=query)
        digits = query.removeprefix("#")
        if (
            digits.isascii() and digits.isdigit() and len(digits) < 19
        ):  # longer overflows a bigint: no such id
            match |= Q(pk=int(digits))
        contacts = contacts.filter(match)
    return contacts


def contact_page(*, account_id: int, query: str, page: str | int | None) -> Page[Contact]:
    """One page of `contacts_matching` (a page number out of range gives the last page)."""
    return Paginator(contacts_matching(account_id=account_id, query=query), CONTACTS_PAGE_SIZE).get_page(page)


def contact_conversations(
    *, account_id: int, contact_id: int, user: Any | None = None, limit: int = 50
) -> list[Conversation]:
    """The contact's latest conversations that `user` sees, with their inbox (1 query)."""
    return list(
        Conversation.objects.filter(account_id=account_id, contact_id=contact_id)
        .filter(visible_conversations_q(account_id=account_id, user=user))
        .select_related("inbox")
        .order_by("-last_activity_at", "-pk")[:limit]
    )


def contact_channel_ids(*, account_id: int, contact_id: int) -> list[ChannelId]:
    return [
        ChannelId(inbox_name=name, channel_type=channel_type, source_id=source_id)
        for name, channel_type, source_id in ContactInbox.objects.filter(
            contact_id=contact_id, inbox__account_id=account_id
        )
        .order_by("inbox__name", "pk")
        .values_list("inbox__name", "inbox__channel_type", "source_id")[:50]
    ]


def possible_duplicates(*, contact: Contact, limit: int = 5) -> list[Contact]:
    """Other contacts of the account with the same name, e-mail or phone: what the merge form offers first."""
    same = Q()
    if contact.name:
        same |= Q(name__iexact=contact.name)
    if contact.email:
        same |= Q(email__iexact=contact.email)
    if contact.phone:
        same |= Q(phone=contact.phone)
    if not same:
        return []
    return list(
        Contact.objects.filter(same, account_id=contact.account_id)
        .exclude(pk=contact.pk)
        .order_by("-pk")[:limit]
    )


def contact_in_account(*, account_id: int, contact_id: int) -> Contact | None:
    """The contact if it is the account's; None otherwise (a merge names the duplicate by a typed id)."""
    return Contact.objects.filter(account_id=account_id, pk=contact_id).first()


def contacts_for_export(*, account_id: int) -> Iterator[Contact]:
    """Every contact of the account, oldest first, read in chunks so a large account does not fill memory."""
    return Contact.objects.filter(account_id=account_id).order_by("pk").iterator(chunk_size=2000)


NOTES_SHOWN = 50


def contact_notes(*, account_id: int, contact_id: int) -> list[ContactNote]:
    """The contact's latest notes, newest first, with their authors (one query); only this account's."""
    return list(
        ContactNote.objects.filter(account_id=account_id, contact_id=contact_id)
        .select_related("author")
        .order_by("-id")[:NOTES_SHOWN]
    )


def contact_note_in_account(*, account_id: int, contact_id: int, note_id: int) -> ContactNote | None:
    """One note of the contact, only if both are this account's (another account's answers None: a 404)."""
    return (
        ContactNote.objects.filter(account_id=account_id, contact_id=contact_id, pk=note_id)
        .select_related("author")
        .first()
    )


def contact_notes_all(*, account_id: int, contact_id: int) -> QuerySet[ContactNote]:
    """Every note of the contact, newest first (the API pages them)."""
    return (
        ContactNote.objects.filter(account_id=account_id, contact_id=contact_id)
        .select_related("author")
        .order_by("-id")
    )
