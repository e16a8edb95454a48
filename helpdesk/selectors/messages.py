"""Reads of a conversation's messages: the API's thread, the dashboard's thread pages, the poll for new messages
and the delivery status of outgoing ones. Each is one query whatever the thread's length."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet

from helpdesk.models import Conversation, Message

THREAD_PAGE_SIZE = 50
POLL_MAX_MESSAGES = 100
POLL_MAX_STATUSES = 200


def conversation_messages(*, conversation: Conversation) -> QuerySet[Message]:
    """The thread in order, notes and activities included (the API and dashboard are for people)."""
    return (
        Message.objects.filter(conversation=conversation)
        .select_related("sender_user", "sender_contact", "delivery")
        .prefetch_related("files")
    )


@dataclass(frozen=True)
class ThreadPage:
    messages: list[Message]
    """Oldest first."""
    older_than: int | None
    """Id to pass as `before` to load the previous page, or None at the start of the thread."""


def _with_attachment_links(messages: list[Message]) -> list[Message]:
    """(name, url) per attachment; the url only when it is http(s). Autoescaping does not stop a
    `javascript:` URL in an href, and attachment URLs come from the customer's side."""
    for message in messages:
        links = []
        for item in message.attachments or []:
            if not isinstance(item, dict):
                continue
            url = str(item.get("url") or "")
            name = str(item.get("file_name") or item.get("caption") or url or "attachment")
            links.append((name, url if url.lower().startswith(("https://", "http://")) else None))
        message.attachment_links = links  # type: ignore[attr-defined]  # for the template only, not a field
    return messages


def thread_page(*, conversation: Conversation, before: int | None = None) -> ThreadPage:
    """The latest THREAD_PAGE_SIZE messages (or those before `before`), in one query (and one for their files).

    Ordered by id: ids follow insertion order, while rows written in one transaction can share `created_at`.
    """
    # One query for the page's stored files, however many messages carry some.
    messages = (
        Message.objects.filter(conversation=conversation)
        .select_related("sender_user", "delivery")
        .prefetch_related("files")
    )
    if before:
        messages = messages.filter(pk__lt=before)
    rows = list(messages.order_by("-id")[: THREAD_PAGE_SIZE + 1])
    has_older = len(rows) > THREAD_PAGE_SIZE
    rows = rows[:THREAD_PAGE_SIZE]
    rows.reverse()
    return ThreadPage(
        messages=_with_attachment_links(rows), older_than=rows[0].pk if has_older and rows else None
    )


def messages_after(*, conversation: Conversation, after: int) -> list[Message]:
    """Messages newer than `after` (the poll), oldest first, at most POLL_MAX_MESSAGES."""
    return _with_attachment_links(
        list(
            Message.objects.filter(conversation=conversation, pk__gt=after)
            .select_related("sender_user", "delivery")
            .prefetch_related("files")
            .order_by("id")[:POLL_MAX_MESSAGES]
        )
    )


def delivery_statuses(*, conversation: Conversation, since: int) -> dict[int, str]:
    """Delivery status of the outgoing public messages shown on the page (from id `since` on)."""
    rows = (
        Message.objects.filter(
            conversation=conversation, pk__gte=since, message_type=Message.Type.OUTGOING, private=False
        )
        .order_by("-id")
        .values_list("pk", "delivery__status")[:POLL_MAX_STATUSES]
    )
    # A message without a `Delivery` row was never queued for sending.
    return {pk: status or "none" for pk, status in rows}
