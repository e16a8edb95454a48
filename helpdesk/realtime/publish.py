"""Publishing dashboard events on Redis pub/sub, after the transaction that caused them commits.

Channel: `helpdesk:events:<account_id>`. Each message is one JSON object with at least `type`, e.g.

    {"type": "conversation", "conversation_id": 7, "status": "open", ...}   a conversation changed
    {"type": "message", "conversation_id": 7, "message_id": 91, ...}         a message was added
    {"type": "notification", "user_id": 3, "id": 12, "text": "...", ...}    for one person only

An event with `user_id` is delivered to that person's streams only. Events carry ids and small facts, never
message text or secrets: a browser that needs more asks the ordinary (access-checked) views for it.

Best effort, like captain's live channel: a Redis error never fails the write that caused it (the dashboard also
refreshes on its own every minute, and each web process's hub tells its pages to resync once Redis is back). After
a failure, publishing is skipped for SKIP_AFTER_FAILURE_SECONDS, so an outage costs a webhook or a worker one
short connect timeout, not one per event. The first error is logged, later ones within a minute are not.
"""

from __future__ import annotations

import json
import logging
import time
from functools import cache
from typing import Any

import redis
from django.conf import settings
from django.db import transaction

logger = logging.getLogger(__name__)

CHANNEL_PREFIX = "helpdesk:events:"
SKIP_AFTER_FAILURE_SECONDS = 5.0
_quiet_until = 0.0
_skip_until = 0.0


def account_channel(account_id: int) -> str:
    return f"{CHANNEL_PREFIX}{account_id}"


@cache
def _client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=0.5, socket_timeout=0.5)


def publish_now(account_id: int, event: dict[str, Any]) -> bool:
    """Publish one event at once; False (and logged) when Redis is unavailable or failed a moment ago."""
    global _quiet_until, _skip_until
    if time.monotonic() < _skip_until:
        return False
    payload = {**event, "at": time.time()}
    try:
        _client().publish(account_channel(account_id), json.dumps(payload, ensure_ascii=False, default=str))
        return True
    except (redis.RedisError, OSError) as exc:
        _skip_until = time.monotonic() + SKIP_AFTER_FAILURE_SECONDS
        if time.monotonic() >= _quiet_until:
            logger.warning("dashboard event not published (%s): %s", type(exc).__name__, exc)
            _quiet_until = time.monotonic() + 60
        return False


def publish_after_commit(account_id: int, event: dict[str, Any]) -> None:
    """Publish once the current transaction commits (at once outside one); a rolled back change says nothing."""
    transaction.on_commit(lambda: publish_now(account_id, event))
