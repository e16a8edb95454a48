"""Activity lines: what happened in a conversation (status changes, handoffs, take over, assignment, labels,
priority, team, failed deliveries), for people. Never sent to the customer.

Its own module, below `messages` and the outbox (helpdesk/delivery/), because both write activity lines.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from helpdesk.models import Conversation, Message

Actor = AbstractBaseUser | str
"""Who made a change: a person (their username is shown) or a name such as "The AI" or "The website"."""

AI = "The AI"


def actor_name(actor: Actor) -> str:
    return actor.get_username() if isinstance(actor, AbstractBaseUser) else actor


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
