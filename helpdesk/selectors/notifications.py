"""Reads of one person's notifications in one account; `access_notification` fetches and authorizes at once.
Only those about conversations the person still sees (helpdesk.selectors.visibility): no link to a conversation
of an inbox they are not in."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, IntegerField, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.http import Http404

from helpdesk.models import Notification

from .visibility import visible_conversations_q


def _mine(*, account_id: int, user: Any) -> QuerySet[Notification]:
    return Notification.objects.filter(account_id=account_id, user=user).filter(
        visible_conversations_q(account_id=account_id, user=user, prefix="conversation__")
    )


def user_notifications(*, account_id: int, user: Any, unread_only: bool = False) -> QuerySet[Notification]:
    """Newest first. Scoped to the account and the person: nobody reads a colleague's notifications."""
    found = _mine(account_id=account_id, user=user)
    if unread_only:
        found = found.filter(read_at__isnull=True)
    return found.order_by("-id")


def unread_count(*, account_id: int, user: Any) -> int:
    return _mine(account_id=account_id, user=user).filter(read_at__isnull=True).count()


def access_notification(*, account_id: int, user: Any, notification_id: int) -> Notification:
    """One of the caller's notifications in this account; 404 for anyone else's (never reveal it exists)."""
    notification = _mine(account_id=account_id, user=user).filter(pk=notification_id).first()
    if notification is None:
        raise Http404("No such notification.")
    return notification


def bell_notifications(*, account_id: int, user: Any, limit: int) -> tuple[int, list[Notification]]:
    """(unread count, the latest `limit`) in ONE query: the bell is on every page. No row at all means
    nothing unread either."""
    unread = (
        _mine(account_id=account_id, user=user)
        .filter(read_at__isnull=True)
        .order_by()
        .values("user_id")
        .annotate(n=Count("id"))
        .values("n")
    )
    latest: list[Notification] = list(
        user_notifications(account_id=account_id, user=user).annotate(
            unread_total=Coalesce(Subquery(unread, output_field=IntegerField()), Value(0))
        )[:limit]
    )
    return (getattr(latest[0], "unread_total", 0) if latest else 0), latest
