"""Dispatching an outgoing message to its inbox's channel (`channel_for(inbox).send`).

A channel fits a reply into its length limit (split into parts, or shortened; see each channel module) and sends
the parts in order. After each accepted part its provider id is appended to `Delivery.provider_message_id`
(comma-separated, `DeliveryParts`). A retry after a transient failure therefore resumes at the first part not yet
accepted instead of sending the customer the earlier parts twice.
"""

from __future__ import annotations

from helpdesk.channels.base import DeliveryResult
from helpdesk.channels.registry import UnknownChannel, channel_for
from helpdesk.conf import helpdesk_setting
from helpdesk.models import Delivery

from .outbox import delivery_update

PART_SEPARATOR = ","
# Stands for a part whose id did not fit in the 255-character field (or that the provider did not report):
# it still counts as sent, which is what resuming needs.
UNRECORDED_PART = "~"
_PROVIDER_ID_MAX_LENGTH = 255


class DeliveryParts:
    """The parts of a delivery's message the provider already accepted, kept in `Delivery.provider_message_id`
    (helpdesk.channels.protocol.SentParts)."""

    def __init__(self, delivery: Delivery) -> None:
        self._delivery = delivery
        self._sent = [part for part in delivery.provider_message_id.split(PART_SEPARATOR) if part]
        self.count = len(self._sent)

    def record(self, provider_message_id: str) -> None:
        self._sent.append(_recordable(self._sent, provider_message_id))
        delivery = self._delivery
        delivery.provider_message_id = PART_SEPARATOR.join(self._sent)
        # Recorded at once, outside the task's transaction: this part reached the customer whatever happens next.
        delivery_update(message_id=delivery.pk, provider_message_id=delivery.provider_message_id)


def delivery_dispatch(*, delivery: Delivery) -> DeliveryResult:
    """Send the delivery's message (fetched with its inbox and contact) through its inbox's channel."""
    message = delivery.message
    try:
        channel = channel_for(message.inbox)
    except UnknownChannel:
        return DeliveryResult(
            ok=False, permanent=True, error=f"Channel {message.inbox.channel_type!r} cannot send."
        )
    return channel.send(
        message, timeout=helpdesk_setting("DELIVERY_TIMEOUT_SECONDS"), parts=DeliveryParts(delivery)
    )


def _recordable(sent: list[str], provider_id: str) -> str:
    used = len(PART_SEPARATOR.join(sent)) + (len(PART_SEPARATOR) if sent else 0)
    if not provider_id or PART_SEPARATOR in provider_id or used + len(provider_id) > _PROVIDER_ID_MAX_LENGTH:
        return UNRECORDED_PART
    return provider_id
