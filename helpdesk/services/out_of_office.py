"""Out-of-office: a customer handed to people outside the inbox's business hours is told when someone will reply,
once per closed period (a second message that night says nothing more; the next night's does).

`out_of_office_claim` decides and records in one conditional update of the conversation (`away_replied_at`),
so two messages arriving together, or a handoff and a message, never both send it. Its callers send the text:
the AI's handoff message gets it appended (helpdesk.services.conversations.conversation_escalate), and a message
to a conversation people already have gets it as a system message (helpdesk.services.messages.message_ingest).
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q
from django.utils import timezone

from helpdesk.models import Conversation
from helpdesk.selectors.business_hours import away_sentence, inbox_closed_since


def out_of_office_claim(*, conversation: Conversation, at: datetime | None = None) -> str:
    """The away text to send now, or "" (open, no hours, or already said in this closed period)."""
    at = at or timezone.now()
    inbox = conversation.inbox
    since = inbox_closed_since(inbox=inbox, at=at)
    if since is None:
        return ""
    text = away_sentence(inbox=inbox, at=at)
    if not text:
        return ""
    told = (
        Conversation.objects.filter(pk=conversation.pk)
        .filter(Q(away_replied_at__isnull=True) | Q(away_replied_at__lt=since))
        .update(away_replied_at=at)
    )
    if not told:
        return ""
    conversation.away_replied_at = at
    return text
