"""Reads of conversations for the REST API and the dashboard; `access_conversation` and `dashboard_conversation`
fetch and authorize in one call (another account's conversation is a 404, never a 403)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import Http404

from helpdesk.models import Conversation

from .visibility import visible_conversations_q


def access_conversation(*, account_id: int, conversation_id: int, user: Any | None = None) -> Conversation:
    """The conversation if it belongs to the account and `user` may see it (helpdesk.selectors.visibility:
    their inboxes); 404 otherwise (never reveal other tenants' objects, nor other inboxes'). `user` None: no
    person asks (a task, the AI's tools)."""
    conversation = (
        Conversation.objects.select_related("inbox", "contact", "contact_inbox")
        .filter(account_id=account_id, pk=conversation_id)
        .filter(visible_conversations_q(account_id=account_id, user=user))
        .first()
    )
    if conversation is None:
        raise Http404("No such conversation.")
    return conversation


def conversation_list(
    *, account_id: int, user: Any | None, status: str | None = None, inbox_id: int | None = None
) -> QuerySet[Conversation]:
    """The account's conversations `user` may see, most recently active first, optionally filtered by status
    and inbox."""
    conversations = (
        Conversation.objects.filter(account_id=account_id)
        .filter(visible_conversations_q(account_id=account_id, user=user))
        .select_related("contact")
        .prefetch_related("labels")
        .order_by("-last_activity_at", "-id")
    )
    if status:
        conversations = conversations.filter(status=status)
    if inbox_id:
        conversations = conversations.filter(inbox_id=inbox_id)
    return conversations


def dashboard_conversation(*, account_id: int, conversation_id: int, user: Any | None = None) -> Conversation:
    """The conversation with what its header shows; 404 for other accounts' conversations and for those of
    inboxes `user` is not let into (never 403)."""
    conversation = (
        Conversation.objects.select_related("contact", "inbox", "assignee")
        .prefetch_related("labels")
        .filter(account_id=account_id, pk=conversation_id)
        .filter(visible_conversations_q(account_id=account_id, user=user))
        .first()
    )
    if conversation is None:
        raise Http404("No such conversation.")
    return conversation
