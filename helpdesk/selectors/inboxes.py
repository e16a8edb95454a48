"""Reads of inboxes."""

from __future__ import annotations

from helpdesk.models import Inbox


def inbox_for_webhook(*, webhook_token: str, channel_type: str) -> Inbox | None:
    """The inbox a webhook URL names (its token and its channel), or None: the caller answers 404 and stores
    nothing before the signature is checked."""
    return Inbox.objects.filter(webhook_token=webhook_token, channel_type=channel_type).first()
