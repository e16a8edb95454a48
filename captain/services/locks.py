"""One run at a time per conversation: a Redis lock with an owner token and a TTL longer than the task's hard
time limit, so a killed worker's lock expires but a live run's lock is never taken over."""

from __future__ import annotations

import uuid
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


# Per-account run slots: a sorted set of run tokens scored by their expiry (Redis server time, so workers on
# several machines agree). Expired tokens (a worker killed mid-run never releases) are dropped before counting,
# so a dead run frees its slot after LOCK_TTL_SECONDS at the latest. One script = one atomic step.
_TAKE_SLOT = """
local now = tonumber(redis.call('TIME')[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]) + 1)
return 1
"""


class AccountRunSlot:
    """One of an account's `MAX_CONCURRENT_RUNS_PER_ACCOUNT` run slots; `acquire()` never blocks."""

    def __init__(self, account_id: int) -> None:
        self.key = f"captain:account-runs:{account_id}"
        self.token = uuid.uuid4().hex
        self.limit = int(captain_setting("MAX_CONCURRENT_RUNS_PER_ACCOUNT"))
        self.held = False

    def acquire(self) -> bool:
        if self.limit <= 0:  # no cap configured
            return True
        ttl = int(captain_setting("LOCK_TTL_SECONDS"))
        self.held = bool(_client().eval(_TAKE_SLOT, 1, self.key, self.limit, ttl, self.token))
        return self.held

    def release(self) -> None:
        if self.held:
            _client().zrem(self.key, self.token)
            self.held = False


def account_run_slot(account_id: int) -> AccountRunSlot:
    return AccountRunSlot(account_id)
