"""Notifications for people: a new escalation, a conversation assigned to them, a mention in a note.
(Being written: helpdesk.services.notifications owner fills in the bodies.)"""

from __future__ import annotations

from django.contrib.auth.models import User

from helpdesk.models import Conversation, Message


def notify_escalated(*, conversation: Conversation, assignee: User | None) -> None:
    return None


def notify_assigned(*, conversation: Conversation, assignee: User, by: User | None) -> None:
    return None


def notify_mentions(*, note: Message, author: User) -> None:
    return None
