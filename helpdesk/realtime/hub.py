"""One Redis subscription per web process, fanned out to every stream that process serves.

A browser tab holds one server-sent-events stream for as long as it is open; giving each its own Redis connection
would make Redis' connection count grow with the number of open tabs. Instead each web process (one event loop
under the ASGI server) keeps ONE pattern subscription, `helpdesk:events:*` (dashboard events, publish.py) and
`captain:live:*` (a run's thoughts, captain.answering.services.live), and hands each message to the in-memory queues of the
streams that asked for that channel. The hub starts with the first stream and reconnects with backoff when
Redis goes away; streams are told to `resync` after an outage (they may have missed events) and when they read
too slowly to keep up (their queue is bounded, so one stuck client cannot grow the process' memory).

Pub/sub keeps nothing: a stream sees what is published after the hub subscribed, which `wait_ready` confirms.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

import redis
import redis.asyncio as aioredis
from django.conf import settings

logger = logging.getLogger(__name__)

PATTERNS = ("helpdesk:events:*", "captain:live:*")
QUEUE_SIZE = 100
"""Events a stream may have waiting; past that it is sent `resync` instead (the page reloads what it shows)."""
BACKOFF_FIRST_SECONDS = 0.5
BACKOFF_MAX_SECONDS = 10.0
READ_SECONDS = 5.0
"""How long one read waits; the client pings Redis every HEALTH_CHECK_SECONDS so a dead link is noticed."""
HEALTH_CHECK_SECONDS = 15

RESYNC: dict[str, Any] = {"type": "resync"}


class Listener:
    """One stream's view of the hub: the messages published on one channel, in order, as dicts."""

    def __init__(self, hub: Hub, channel: str) -> None:
        self.hub = hub
        self.channel = channel
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=QUEUE_SIZE)
        self.dropped = 0

    def offer(self, message: dict[str, Any]) -> None:
        try:
            self.queue.put_nowait(message)
        except asyncio.QueueFull:
            # Too slow to keep up: forget what is waiting and tell the page to reload instead of queueing more.
            self.dropped += self.queue.qsize() + 1
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(dict(RESYNC))

    async def get(self, timeout: float) -> dict[str, Any] | None:
        """The next message, or None when none came within `timeout` seconds."""
        try:
            return await asyncio.wait_for(self.queue.get(), timeout)
        except TimeoutError:
            return None

    def close(self) -> None:
        self.hub.remove(self)


class Hub:
    """The process' subscription. Bound to the event loop it was created in (`get_hub` makes one per loop)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.loop = asyncio.get_running_loop()
        self.listeners: dict[str, set[Listener]] = {}
        self.ready = asyncio.Event()
        self.connects = 0
        self._task: asyncio.Task[None] | None = None

    def listen(self, channel: str) -> Listener:
        listener = Listener(self, channel)
        self.listeners.setdefault(channel, set()).add(listener)
        if self._task is None or self._task.done():
            self._task = self.loop.create_task(self._run(), name="helpdesk-realtime-hub")
        return listener

    def remove(self, listener: Listener) -> None:
        group = self.listeners.get(listener.channel)
        if group is not None:
            group.discard(listener)
            if not group:
                del self.listeners[listener.channel]

    @property
    def stream_count(self) -> int:
        return sum(len(group) for group in self.listeners.values())

    async def wait_ready(self, timeout: float) -> bool:
        """True once the subscription is live (what is published from now on reaches the listeners)."""
        try:
            await asyncio.wait_for(self.ready.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def _dispatch(self, raw: dict[str, Any]) -> None:
        if raw.get("type") != "pmessage":
            return
        channel = raw["channel"].decode() if isinstance(raw["channel"], bytes) else str(raw["channel"])
        group = self.listeners.get(channel)
        if not group:
            return
        try:
            message = json.loads(raw["data"])  # parsed once, whatever the number of streams
        except (TypeError, ValueError):
            return
        if not isinstance(message, dict):
            return
        for listener in list(group):
            listener.offer(message)

    def _broadcast_resync(self) -> None:
        for group in list(self.listeners.values()):
            for listener in list(group):
                listener.offer(dict(RESYNC))

    async def _run(self) -> None:
        backoff = BACKOFF_FIRST_SECONDS
        while True:
            client = aioredis.Redis.from_url(
                self.url, socket_connect_timeout=2, health_check_interval=HEALTH_CHECK_SECONDS
            )
            pubsub = client.pubsub()
            try:
                await pubsub.psubscribe(*PATTERNS)
                # Wait for Redis to confirm, so `ready` means "subscribed", not "asked to subscribe".
                confirmed = 0
                while confirmed < len(PATTERNS):
                    raw = await pubsub.get_message(timeout=READ_SECONDS)
                    if raw is None:
                        raise redis.ConnectionError("no subscription confirmation")
                    if raw.get("type") == "psubscribe":
                        confirmed += 1
                if self.connects:
                    self._broadcast_resync()  # events published while we were away are lost
                self.connects += 1
                self.ready.set()
                backoff = BACKOFF_FIRST_SECONDS
                while True:
                    raw = await pubsub.get_message(timeout=READ_SECONDS)
                    if raw is not None:
                        self._dispatch(raw)
            except asyncio.CancelledError:
                raise
            except (redis.RedisError, OSError) as exc:
                if self.ready.is_set() or self.connects == 0:
                    logger.warning(
                        "live updates: Redis subscription lost (%s), reconnecting", type(exc).__name__
                    )
                self.ready.clear()
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
                with contextlib.suppress(Exception):
                    await client.aclose()
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, BACKOFF_MAX_SECONDS)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None
        self.ready.clear()


_hub: Hub | None = None


def get_hub() -> Hub:
    """The hub of the running event loop (one per web process under the ASGI server)."""
    global _hub
    loop = asyncio.get_running_loop()
    if _hub is None or _hub.loop is not loop or _hub.url != settings.REDIS_URL:
        if _hub is not None and _hub.loop is loop and _hub._task is not None:
            _hub._task.cancel()  # REDIS_URL changed (tests): the old subscription goes
        _hub = Hub(settings.REDIS_URL)
    return _hub


async def close_hub() -> None:
    """Stop the hub of the running loop (tests that run each request in a new loop; a worker never needs it)."""
    global _hub
    if _hub is not None and _hub.loop is asyncio.get_running_loop():
        await _hub.close()
        _hub = None
