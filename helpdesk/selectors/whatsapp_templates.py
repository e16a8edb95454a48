"""WhatsApp templates read: the approved ones an inbox offers, and whether a conversation's 24-hour
customer-service window is closed (then Meta delivers only a template; a free text fails with code 131047)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import QuerySet
from django.http import Http404
from django.utils import timezone

from helpdesk.channels.registry import channel_for
from helpdesk.models import Conversation, Inbox, Message, WhatsAppTemplate

from .visibility import hidden_inboxes


@dataclass(frozen=True)
class WindowClosed:
    last_customer_message_at: datetime | None
    """None: the customer never wrote in this conversation."""


def whatsapp_window_closed(*, conversation: Conversation, now: datetime | None = None) -> WindowClosed | None:
    """A WhatsApp conversation whose customer last wrote more than 24 hours ago (or never): what Meta calls a
    closed customer-service window. None for an open window and for every other channel."""
    hours = channel_for(conversation.inbox).reply_window_hours
    if hours is None:
        return None
    last = (
        Message.objects.filter(conversation_id=conversation.pk, message_type=Message.Type.INCOMING)
        .order_by("-created_at")
        .values_list("created_at", flat=True)
        .first()
    )
    if last is not None and last > (now or timezone.now()) - timedelta(hours=hours):
        return None
    return WindowClosed(last_customer_message_at=last)


def approved_templates(*, inbox_id: int) -> QuerySet[WhatsAppTemplate]:
    return WhatsAppTemplate.objects.filter(
        inbox_id=inbox_id, status=WhatsAppTemplate.Status.APPROVED
    ).order_by("name", "language")


def inbox_templates(*, account_id: int, inbox_id: int, user: Any | None) -> QuerySet[WhatsAppTemplate]:
    """An inbox's templates for a person of the account; 404 for another account's inbox and one the person is
    not let into (as its conversations)."""
    inboxes = Inbox.objects.filter(account_id=account_id, pk=inbox_id)
    if user is not None:
        inboxes = inboxes.exclude(pk__in=hidden_inboxes(account_id=account_id, user_id=user.pk))
    if not inboxes.exists():
        raise Http404("No such inbox.")
    return WhatsAppTemplate.objects.filter(inbox_id=inbox_id).order_by("name", "language", "pk")


def template_for(*, inbox_id: int, template_id: int) -> WhatsAppTemplate:
    """One of the inbox's templates; 404 for another inbox's."""
    template = WhatsAppTemplate.objects.filter(inbox_id=inbox_id, pk=template_id).first()
    if template is None:
        raise Http404("No such template.")
    return template
