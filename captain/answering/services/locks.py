"""One run at a time per conversation: a Redis lock with an owner token, held as a short lease that a
background thread renews while the run lives. A killed worker stops renewing, so its lock lapses within
`LOCK_LEASE_SECONDS` and the redelivered message is answered then, instead of after the task's hard time limit.
Should a live run's lease lapse anyway (Redis unreachable for longer than the lease), the fence in
`outcome_apply` keeps an overlapping run from answering the same messages twice."""

from __future__ import annotations

import logging
import threading
import uuid
from functools import cache

import redis
from django.conf import settings
from redis.exceptions import LockError, LockNotOwnedError
from redis.lock import Lock

from captain.conf import captain_setting

logger = logging.getLogger(__name__)


@cache
def _client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=5)


class ConversationLease:
    """The conversation's lock for one run; `acquire()` never blocks."""

    def __init__(self, conversation_id: int, lease_seconds: float | None = None) -> None:
        self.conversation_id = conversation_id
        self.lease = float(lease_seconds or captain_setting("LOCK_LEASE_SECONDS"))
        # redis-py's Lock stores a random token and extends / releases only while it still owns the key (Lua
        # check-and-set). thread_local=False: the renewing thread must see the token the run's thread took.
        self.lock: Lock = _client().lock(
            f"captain:conversation-lock:{conversation_id}",
            timeout=self.lease,
            blocking=False,
            thread_local=False,
        )
        self.lost = threading.Event()
        """Set when a renewal found the lock owned by someone else (the lease had lapsed)."""
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    def acquire(self) -> bool:
        if not self.lock.acquire():
            return False
        self._renewer = threading.Thread(
            target=self._renew, name=f"lease-conversation-{self.conversation_id}", daemon=True
        )
        self._renewer.start()
        return True

    def _renew(self) -> None:
        while not self._stop.wait(self.lease / 3):
            try:
                self.lock.extend(self.lease, replace_ttl=True)
            except LockNotOwnedError:
                self.lost.set()
                logger.warning("lease of conversation %s lapsed during the run", self.conversation_id)
                return
            except (redis.RedisError, LockError):
                # Redis unreachable: try again at the next tick; if the lease lapses meanwhile, the outcome
                # fence still prevents a second answer.
                logger.warning("could not renew the lease of conversation %s", self.conversation_id)

    def release(self) -> None:
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join(timeout=5)
            self._renewer = None
        try:
            self.lock.release()
        except LockError:
            logger.warning("conversation lock %s lapsed before release", self.conversation_id)


def conversation_lock(conversation_id: int, lease_seconds: float | None = None) -> ConversationLease:
    return ConversationLease(conversation_id, lease_seconds)


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
