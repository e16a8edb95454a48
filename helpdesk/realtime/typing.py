"""A person on the team is composing a reply: `{"type": "agent_typing", "conversation_id"}` on the account's
channel. The website widget's stream shows it to that conversation's visitor as "typing" (helpdesk.api.widget);
the dashboard's pages ignore it.

Throttled per conversation in Redis (SET NX with a time to live, shared by every web process): however fast one
person types, and however many people type in one conversation, it is published at most once per
TYPING_EVERY_SECONDS, so the account's channel, which every open dashboard tab and widget of the account reads,
is not flooded. Best effort like every dashboard event: with Redis away nothing is said and nothing fails.
"""

from __future__ import annotations

import logging

import redis

from .publish import _client, publish_now

logger = logging.getLogger(__name__)

TYPING_EVERY_SECONDS = 3.0
KEY_PREFIX = "helpdesk:agent_typing:"


def agent_typing(*, account_id: int, conversation_id: int) -> bool:
    """Publish `agent_typing` for the conversation unless it was published in the last TYPING_EVERY_SECONDS.
    True when it was published now."""
    try:
        first = _client().set(
            f"{KEY_PREFIX}{conversation_id}", 1, nx=True, px=int(TYPING_EVERY_SECONDS * 1000)
        )
    except (redis.RedisError, OSError) as exc:
        logger.debug("agent typing not published (%s)", type(exc).__name__)
        return False
    if not first:
        return False
    return publish_now(account_id, {"type": "agent_typing", "conversation_id": conversation_id})
