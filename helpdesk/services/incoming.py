"""Storing one customer message exactly once: the insert both the ingest path and a rating answer use.

Its own module, below `messages` and `csat` (messages imports csat's hook, so neither can hold it for both).
"""

from __future__ import annotations

from django.db import IntegrityError, transaction

from helpdesk.channels.base import InboundMessage
from helpdesk.models import ContactInbox, Conversation, Message


def incoming_message_create(
    *, conversation: Conversation, contact_inbox: ContactInbox, inbound: InboundMessage, content: str
) -> tuple[Message, bool]:
    """Insert the customer's message into `conversation`; (message, created). A provider retry that lost the
    race is decided by the unique (inbox, provider message id) constraint: the stored row, created=False."""
    try:
        with transaction.atomic():
            message = Message.objects.create(
                account_id=conversation.account_id,
                inbox_id=conversation.inbox_id,
                conversation=conversation,
                message_type=Message.Type.INCOMING,
                sender_type=Message.SenderType.CONTACT,
                sender_contact=contact_inbox.contact,
                content=content,
                attachments=list(inbound.attachments),
                provider_message_id=inbound.provider_message_id,
            )
    except IntegrityError:
        existing = Message.objects.get(
            inbox_id=conversation.inbox_id, provider_message_id=inbound.provider_message_id
        )
        return existing, False
    return message, True
