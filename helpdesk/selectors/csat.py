"""Reads of satisfaction ratings (helpdesk.services.csat records them) for the REST API."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import QuerySet

from helpdesk.models import CsatResponse

from .visibility import visible_conversations_q


def csat_responses(
    *,
    account_id: int,
    user: Any | None,
    inbox_id: int | None = None,
    conversation_id: int | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet[CsatResponse]:
    """The account's ratings of conversations `user` sees, newest first; `since`/`until` bound when the rating
    was given (until exclusive)."""
    responses = (
        CsatResponse.objects.filter(account_id=account_id)
        .filter(visible_conversations_q(account_id=account_id, user=user, prefix="conversation__"))
        .select_related("conversation__contact")
        .order_by("-created_at", "-id")
    )
    if inbox_id:
        responses = responses.filter(conversation__inbox_id=inbox_id)
    if conversation_id:
        responses = responses.filter(conversation_id=conversation_id)
    if since is not None:
        responses = responses.filter(created_at__gte=since)
    if until is not None:
        responses = responses.filter(created_at__lt=until)
    return responses
