"""Dispatching an outgoing message to its inbox's channel.

Provider channels (Telegram, WhatsApp Cloud, Slack) each say how a reply fits their length limit (`fit_text`:
split into parts, or shorten). Parts are sent in order, and after each accepted part its provider id is appended
to `Delivery.provider_message_id` (comma-separated). A retry after a transient failure therefore resumes at the
first part not yet accepted instead of sending the customer the earlier parts twice.
"""

from __future__ import annotations

from dataclasses import replace
from types import ModuleType
from typing import Any

from helpdesk.channels import api_channel, slack, telegram, whatsapp
from helpdesk.channels.base import DeliveryResult
from helpdesk.conf import helpdesk_setting
from helpdesk.models import Delivery, Inbox, Message

from .outbox import delivery_update

PROVIDER_CHANNELS: dict[str, ModuleType] = {
    Inbox.ChannelType.TELEGRAM: telegram,
    Inbox.ChannelType.WHATSAPP: whatsapp,
    Inbox.ChannelType.SLACK: slack,
}
PART_SEPARATOR = ","
# Stands for a part whose id did not fit in the 255-character field (or that the provider did not report):
# it still counts as sent, which is what resuming needs.
UNRECORDED_PART = "~"
_PROVIDER_ID_MAX_LENGTH = 255


def outbound_event(message: Message) -> dict[str, Any]:
    """The JSON event the API channel POSTs to the callback URL for one outgoing message."""
    return {
        "event": "message.created",
        "message_id": message.id,
        "conversation_id": message.conversation_id,
        "contact_id": message.conversation.contact_inbox.source_id,
        "text": message.content,
        "sender": {
            "type": message.sender_type,
            "agent_key": message.ai_agent_key or None,
            "name": message.ai_agent_name or None,
        },
        "created_at": message.created_at.isoformat(),
        # Only when there are some, so a receiver sees exactly the event it always did otherwise.
        **({"suggestions": list(message.quick_replies)} if message.quick_replies else {}),
    }


def delivery_dispatch(*, delivery: Delivery) -> DeliveryResult:
    """Send the delivery's message (fetched with its inbox and contact) through its inbox's channel."""
    message = delivery.message
    inbox = message.inbox
    if inbox.channel_type == Inbox.ChannelType.API:
        return api_channel.send(
            callback_url=inbox.callback_url,
            secret=inbox.secret,
            event=outbound_event(message),
            event_id=f"message-{message.id}",
            timeout=helpdesk_setting("DELIVERY_TIMEOUT_SECONDS"),
        )
    channel = PROVIDER_CHANNELS.get(inbox.channel_type)
    if channel is None:
        return DeliveryResult(ok=False, permanent=True, error=f"Channel {inbox.channel_type!r} cannot send.")
    return _send_parts(delivery=delivery, channel=channel)


def _send_parts(*, delivery: Delivery, channel: ModuleType) -> DeliveryResult:
    message = delivery.message
    parts: list[str] = channel.fit_text(message.content)
    sent = [part for part in delivery.provider_message_id.split(PART_SEPARATOR) if part]
    source_id = message.conversation.contact_inbox.source_id
    timeout = helpdesk_setting("DELIVERY_TIMEOUT_SECONDS")
    quick_replies = [q for q in message.quick_replies or [] if isinstance(q, str) and q.strip()]
    for index in range(len(sent), len(parts)):
        outcome = channel.send(
            inbox=message.inbox,
            source_id=source_id,
            text=parts[index],
            timeout=timeout,
            # Offered with the last part, where the customer reads on.
            quick_replies=quick_replies if index == len(parts) - 1 else [],
        )
        if not outcome.result.ok:
            if len(parts) > 1:
                error = f"part {index + 1} of {len(parts)}: {outcome.result.error}"
                return replace(outcome.result, error=error)
            return outcome.result
        sent.append(_recordable(sent, outcome.provider_message_id))
        delivery.provider_message_id = PART_SEPARATOR.join(sent)
        # Recorded at once, outside the task's transaction: this part reached the customer whatever happens next.
        delivery_update(message_id=delivery.pk, provider_message_id=delivery.provider_message_id)
    return DeliveryResult(ok=True, status_code=200)


def _recordable(sent: list[str], provider_id: str) -> str:
    used = len(PART_SEPARATOR.join(sent)) + (len(PART_SEPARATOR) if sent else 0)
    if not provider_id or PART_SEPARATOR in provider_id or used + len(provider_id) > _PROVIDER_ID_MAX_LENGTH:
        return UNRECORDED_PART
    return provider_id
