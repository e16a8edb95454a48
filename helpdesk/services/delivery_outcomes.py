"""Recording the end of a delivery: sent, or failed for good (people are told; an AI reply is refunded)."""

from __future__ import annotations

from django.db import transaction

from helpdesk.conf import ai_responder
from helpdesk.models import Message

from .messages import message_create_activity


def delivery_mark_sent(*, message_id: int) -> None:
    Message.objects.filter(pk=message_id).update(
        delivery_status=Message.DeliveryStatus.SENT, delivery_error="", delivery_lease_until=None
    )


@transaction.atomic
def delivery_mark_failed(*, message_id: int, error: str) -> None:
    message = (
        Message.objects.select_for_update(no_key=True, of=("self",))
        .select_related("conversation")
        .get(pk=message_id)
    )
    if message.delivery_status == Message.DeliveryStatus.FAILED:
        return
    message.delivery_status = Message.DeliveryStatus.FAILED
    message.delivery_error = error[:2000]
    message.delivery_lease_until = None
    message.save(update_fields=["delivery_status", "delivery_error", "delivery_lease_until"])
    message_create_activity(
        conversation=message.conversation, content=f"A reply could not be delivered: {error[:300]}"
    )
    responder = ai_responder()
    if responder is not None and message.sender_type == Message.SenderType.ASSISTANT:
        # The customer never got it, so it must not cost a credit.
        responder.delivery_failed(message)
