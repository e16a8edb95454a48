"""Dispatching an outgoing message to its inbox's channel."""

from __future__ import annotations

from helpdesk.channels import api_channel
from helpdesk.channels.base import DeliveryResult
from helpdesk.conf import helpdesk_setting
from helpdesk.models import Inbox, Message


def outbound_event(message: Message) -> dict:
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
    }


def outbound_send(*, message: Message) -> DeliveryResult:
    inbox = message.inbox
    if inbox.channel_type == Inbox.ChannelType.API:
        return api_channel.send(
            callback_url=inbox.callback_url,
            secret=inbox.secret,
            event=outbound_event(message),
            event_id=f"message-{message.id}",
            timeout=helpdesk_setting("DELIVERY_TIMEOUT_SECONDS"),
        )
    return DeliveryResult(ok=False, permanent=True, error=f"Channel {inbox.channel_type!r} cannot send yet.")
