"""Activity lines: what happened in a conversation (status changes, handoffs, failed deliveries), for people.

Its own module, below `messages` and the outbox (helpdesk/delivery/), because both write activity lines.
"""

from __future__ import annotations

from helpdesk.models import Conversation, Message


def message_create_activity(*, conversation: Conversation, content: str) -> Message:
    """A line in the thread for people (status changes, handoffs). Never sent to the customer."""
    return Message.objects.create(
        account_id=conversation.account_id,
        inbox_id=conversation.inbox_id,
        conversation=conversation,
        message_type=Message.Type.ACTIVITY,
        sender_type=Message.SenderType.SYSTEM,
        content=content,
    )
