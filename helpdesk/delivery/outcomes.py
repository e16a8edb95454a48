"""Recording the end of a delivery: sent, failed for good (people are told; an AI reply is refunded), or
retrying later; and a provider's later report that a message we sent never arrived."""

from __future__ import annotations

import re
from datetime import datetime

from django.db import transaction

from helpdesk.conf import ai_responder
from helpdesk.models import Delivery, Inbox, Message
from helpdesk.realtime.events import delivery_changed
from helpdesk.services.activities import message_create_activity

from .dispatch import PART_SEPARATOR
from .outbox import delivery_update


def delivery_mark_sent(*, message_id: int) -> None:
    delivery_update(message_id=message_id, status=Delivery.Status.SENT, error="", lease_until=None)
    delivery_changed(message_id=message_id)


def delivery_mark_retrying(*, message_id: int, error: str, due: datetime) -> None:
    """A transient failure: release the lease; `due` (the retry's time) keeps the sweeper away until after it."""
    delivery_update(message_id=message_id, error=error, lease_until=None, enqueued_at=due)


@transaction.atomic
def delivery_mark_failed(*, message_id: int, error: str) -> None:
    delivery = (
        Delivery.objects.select_for_update(no_key=True, of=("self",))
        .select_related("message__conversation")
        .get(pk=message_id)
    )
    if delivery.status == Delivery.Status.FAILED:
        return
    delivery.status = Delivery.Status.FAILED
    delivery.error = error[:2000]
    delivery.lease_until = None
    delivery.save(update_fields=["status", "error", "lease_until", "updated_at"])
    delivery_changed(message_id=message_id)
    message = delivery.message
    message_create_activity(
        conversation=message.conversation, content=f"A reply could not be delivered: {error[:300]}"
    )
    responder = ai_responder()
    if responder is not None and message.sender_type == Message.SenderType.ASSISTANT:
        # The customer never got it, so it must not cost a credit.
        responder.delivery_failed(message)


def delivery_report_failure(*, inbox: Inbox, provider_message_id: str, error: str) -> int | None:
    """A provider said afterwards that a message we sent was not delivered (a WhatsApp `failed` status, e.g.
    131047 outside the 24-hour window): mark it failed like a permanent send error. Returns the message id, or
    None when the id is not one of ours (statuses of messages sent outside the helpdesk)."""
    if not provider_message_id or PART_SEPARATOR in provider_message_id:
        return None
    # One whole part of the comma-separated list, never a substring of another id.
    part_pattern = rf"(^|{PART_SEPARATOR}){re.escape(provider_message_id)}({PART_SEPARATOR}|$)"
    message_id = (
        Delivery.objects.filter(
            message__inbox=inbox,
            message__message_type=Message.Type.OUTGOING,
            provider_message_id__regex=part_pattern,
        )
        .values_list("pk", flat=True)
        .first()
    )
    if message_id is None:
        return None
    delivery_mark_failed(message_id=message_id, error=error)
    return message_id
