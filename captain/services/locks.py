"""One run at a time per conversation: a Redis lock with an owner token and a TTL longer than the task's hard
time limit, so a killed worker's lock expires but a live run's lock is never taken over."""

from __future__ import annotations

from functools import cache

import redis
from django.conf import settings
from redis.lock import Lock

from ..conf import captain_setting


@cache
def _client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=5)


def conversation_lock(conversation_id: int) -> Lock:
    # redis-py's Lock stores a random token and releases only if it still owns the key (Lua check-and-delete).
    return _client().lock(
        f"captain:conversation-lock:{conversation_id}",
        timeout=captain_setting("LOCK_TTL_SECONDS"),
        blocking=False,
    )
