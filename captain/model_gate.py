"""Customers first at the model: a priority semaphore per model endpoint, shared by every process through Redis.

Every model call holds a slot of its endpoint's gate while it talks to the model (`OpenAIChatModel(gate=...)`).
The rules, decided atomically in one Lua script so that web processes, customer workers and background workers
on any host agree:

- An endpoint has `MODEL_GATE_SLOTS` slots (the bundled model: its two server slots; a hosted API: many).
- A call in the customer lane (`captain.lanes`) takes any free slot. When none is free it registers as waiting.
- A background call takes a slot only when no customer call is waiting for the endpoint *and* fewer than
  `slots - MODEL_GATE_CUSTOMER_SLOTS` slots are held (at least one), so a customer finds a free slot at once,
  or at worst waits for the calls already running.
- With `MODEL_GATE_BACKGROUND_ALONE` (the bundled model's default), a background call also waits while any
  customer call is *running*, and for `CUSTOMER_GRACE_MS` after one ends. A model on the machine's own CPU serves
  two calls at half speed each, and a reply is several calls in a row (route, answer, check): a background call
  slipping in between them shares the cores with the rest of that reply. On a hosted API two calls do not slow
  each other down, so this is off there.
- In that mode a customer's message also holds background calls from the moment it is stored
  (`customer_coming`, called by the web process that took the message), through the debounce window in which the
  customer may still be typing and until the reply's first call begins: a background call starting in that window
  shared the cores with the whole reply (the demo's first question, asked while the seed's routing examples were
  drafted). The hold is one key for every endpoint: the cores are the machine's, whichever endpoint runs on them.

Crash safety: a slot is a lease (the call's worst-case duration), a waiting customer a short lease it renews while
it polls; a killed process's entries lapse by themselves. Availability over priority: when Redis does not
answer, a call goes ahead ungated (logged); a customer call that waited `max_wait` goes ahead ungated too, while
a background call gives up with a `ModelError("timeout")` (its task fails or retries as on any model timeout).
"""

from __future__ import annotations

import hashlib
import logging
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import lru_cache

import redis
from django.conf import settings
from redis.backoff import NoBackoff
from redis.retry import Retry

from captain import lanes
from captain.conf import captain_setting
from captain.runtime import ModelError

logger = logging.getLogger(__name__)

_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
local token, lane = ARGV[1], ARGV[2]
local slots, background_slots = tonumber(ARGV[3]), tonumber(ARGV[4])
local lease_ms, wait_ms = tonumber(ARGV[5]), tonumber(ARGV[6])
local alone = ARGV[7] == '1'
local held = redis.call('ZCARD', KEYS[1])
if lane == 'customer' then
  if held < slots then
    redis.call('ZADD', KEYS[1], now + lease_ms, token)
    redis.call('PEXPIRE', KEYS[1], lease_ms)
    redis.call('ZADD', KEYS[3], now + lease_ms, token)
    redis.call('PEXPIRE', KEYS[3], lease_ms)
    redis.call('ZREM', KEYS[2], token)
    return 1
  end
  redis.call('ZADD', KEYS[2], now + wait_ms, token)
  redis.call('PEXPIRE', KEYS[2], wait_ms)
  return 0
end
if redis.call('ZCARD', KEYS[2]) > 0 or held >= background_slots then
  return 0
end
if alone and (redis.call('ZCARD', KEYS[3]) > 0 or redis.call('ZCARD', KEYS[4]) > 0) then
  return 0
end
redis.call('ZADD', KEYS[1], now + lease_ms, token)
redis.call('PEXPIRE', KEYS[1], lease_ms)
return 1
"""

_RELEASE = """
redis.call('ZREM', KEYS[1], ARGV[1])
if ARGV[2] == 'customer' then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('ZADD', KEYS[3], now + tonumber(ARGV[3]), ARGV[1])
  redis.call('PEXPIRE', KEYS[3], tonumber(ARGV[3]))
end
return 1
"""

_HOLD = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease_ms = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now + lease_ms, ARGV[1])
if redis.call('PTTL', KEYS[1]) < lease_ms then
  redis.call('PEXPIRE', KEYS[1], lease_ms)
end
return 1
"""

COMING_KEY = "captain:gate:customer-coming"
"""Customer messages stored and not yet at the model (one key for every endpoint: see the module's docstring)."""

CUSTOMER_GRACE_MS = 3000
"""How long after a customer call ends background calls still wait (background-alone mode): the next call of the
same reply starts within this (the grounding check and the next agent run in milliseconds)."""
CUSTOMER_POLL_SECONDS = 0.02
BACKGROUND_POLL_SECONDS = 0.1
WAITING_LEASE_MS = 2000
"""A waiting customer renews its entry every poll; a dead one stops holding background calls back after this."""


@dataclass(frozen=True)
class GateSettings:
    slots: int
    customer_slots: int
    lease_seconds: float
    max_wait_seconds: float
    background_alone: bool = False
    """Background calls wait while a customer call runs, not only while one waits (a CPU-bound model)."""

    @property
    def background_slots(self) -> int:
        return max(1, self.slots - self.customer_slots)


class RedisModelGate:
    """The gate of one endpoint (see the module's docstring); implements `captain.runtime.ModelGate`."""

    def __init__(
        self, endpoint_key: str, config: GateSettings, client: redis.Redis, coming_key: str = COMING_KEY
    ) -> None:
        digest = hashlib.sha256(endpoint_key.encode()).hexdigest()[:16]
        # Held slots (both lanes), waiting customers, the held slots of customer calls, and customer messages on
        # their way to the model.
        self.keys = [f"captain:gate:{digest}:{name}" for name in ("held", "waiting", "customer")]
        self.keys.append(coming_key)
        self.config = config
        self.client = client
        self._acquire_script = client.register_script(_ACQUIRE)
        self._release_script = client.register_script(_RELEASE)

    @contextmanager
    def slot(self) -> Iterator[float]:
        lane = lanes.current()
        token = uuid.uuid4().hex
        started = time.monotonic()
        holding = self._acquire(token, lane, started)
        try:
            yield (time.monotonic() - started) * 1000
        finally:
            if holding:
                self._release(token, lane)

    def _acquire(self, token: str, lane: lanes.Lane, started: float) -> bool:
        """True once a slot is held; False when the call goes ahead without one (Redis down, customer waited
        too long). Raises ModelError for a background call that waited too long."""
        c = self.config
        poll = CUSTOMER_POLL_SECONDS if lane == lanes.CUSTOMER else BACKGROUND_POLL_SECONDS
        args: list[str | int] = [
            token,
            lane,
            c.slots,
            c.background_slots,
            int(c.lease_seconds * 1000),
            WAITING_LEASE_MS,
            int(c.background_alone),
        ]
        while True:
            try:
                if self._acquire_script(keys=self.keys, args=args):
                    return True
            except redis.RedisError as exc:
                logger.warning("model gate unavailable, calling the model ungated: %s", exc)
                return False
            if time.monotonic() - started >= c.max_wait_seconds:
                if lane == lanes.CUSTOMER:
                    logger.warning(
                        "a customer call waited %.0f s for the model gate; going ahead", c.max_wait_seconds
                    )
                    self._forget_waiting(token)
                    return False
                raise ModelError(
                    "timeout", f"waited {c.max_wait_seconds:.0f} s for the model: customers first"
                )
            time.sleep(poll)

    def _release(self, token: str, lane: lanes.Lane) -> None:
        try:
            # A customer's entry stays a moment longer (CUSTOMER_GRACE_MS): its reply's next call follows.
            self._release_script(keys=self.keys, args=[token, lane, CUSTOMER_GRACE_MS])
        except redis.RedisError as exc:
            # The lease lapses by itself.
            logger.warning("model gate release failed (the slot lapses with its lease): %s", exc)

    def _forget_waiting(self, token: str) -> None:
        with suppress(redis.RedisError):
            self.client.zrem(self.keys[1], token)


def customer_coming(
    *, token: str, seconds: float, client: redis.Redis | None = None, key: str = COMING_KEY
) -> None:
    """A customer's message was stored and its reply starts within `seconds` (the debounce): on a CPU-bound model
    (`MODEL_GATE_BACKGROUND_ALONE`) no background call starts until then and `CUSTOMER_GRACE_MS` more, by which time
    the reply's first call holds them back itself. A no-op elsewhere; never raises (only an optimisation)."""
    if not lanes.enabled() or not captain_setting("MODEL_GATE_BACKGROUND_ALONE"):
        return
    lease_ms = int(max(0.0, seconds) * 1000) + CUSTOMER_GRACE_MS
    try:
        (client or _redis(settings.REDIS_URL)).eval(_HOLD, 1, key, token, lease_ms)
    except redis.RedisError as exc:
        logger.info("could not hold background model calls for a customer: %s", exc)


def gate_redis(url: str) -> redis.Redis:
    """A client for the gate: short timeouts and no retries (the client's default retries with backoff would add
    seconds to every model call during a Redis outage): the gate must never be what holds a reply up."""
    return redis.Redis.from_url(
        url, socket_connect_timeout=0.5, socket_timeout=2, retry=Retry(NoBackoff(), 0)
    )


@lru_cache(maxsize=1)
def _redis(url: str) -> redis.Redis:
    # One connection pool per process.
    return gate_redis(url)


def gate_settings() -> GateSettings:
    timeout = float(captain_setting("LLM_TIMEOUT_SECONDS"))
    attempts = int(captain_setting("LLM_MAX_RETRIES")) + 1
    return GateSettings(
        slots=max(1, int(captain_setting("MODEL_GATE_SLOTS"))),
        customer_slots=max(0, int(captain_setting("MODEL_GATE_CUSTOMER_SLOTS"))),
        # A slot outlives the call's worst case (every attempt timing out) a little: a live call never loses it.
        lease_seconds=timeout * attempts + 10.0,
        max_wait_seconds=timeout,
        background_alone=bool(captain_setting("MODEL_GATE_BACKGROUND_ALONE")),
    )


def gate_for(endpoint_key: str) -> RedisModelGate | None:
    """The gate of the endpoint `endpoint_key` names (its URL and name), or None with lanes turned off."""
    if not lanes.enabled():
        return None
    return RedisModelGate(endpoint_key, gate_settings(), _redis(settings.REDIS_URL))
