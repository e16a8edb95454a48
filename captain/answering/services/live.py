"""What a run is doing, live: its thoughts and events published on Redis pub/sub while it runs, for the
playground and the debug log (server-sent events, captain.answering.views.live). Internal only: nothing here is ever
published to a channel a customer reads.

Channel: `captain:live:<scope>`, scope `conversation:<id>` or `playground:<run_id>`. Each message is one JSON
object:

    {"type": "thought", "agent": "<agent key>", "text": "<a piece of the thought>", "at": <unix time>}
    {"type": "event", "agent": "<agent key>",
     "event": {"type": "<RunEvent.type>", "name": "...", "detail": "...", "data": {...}}, "at": <unix time>}
    {"type": "end", "at": <unix time>}

Pub/sub keeps nothing: a page that connects late sees what is published from then on (the debug log shows the
whole run once it is stored). Publishing is best effort: a Redis error never breaks or slows a run; the first
one is logged and the publisher drops everything after it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Iterator, Sequence
from functools import cache
from typing import Any

import redis
from django.conf import settings

from captain.answering.services.config_cache import cached
from captain.answering.services.redaction import account_secrets, scrub
from captain.runtime import Agent, RunContext, RunEvent, RunHooks

logger = logging.getLogger(__name__)

CHANNEL_PREFIX = "captain:live:"
MAX_TEXT_CHARS = 2000
"""A thought piece or an event detail is cut to this length (pieces are small; this bounds a bad one)."""
MAX_DATA_CHARS = 4000
"""An event's data above this size (as JSON) is sent with its strings shortened, or as its keys only."""
SHORT_VALUE_CHARS = 200


def live_channel(scope: str) -> str:
    return f"{CHANNEL_PREFIX}{scope}"


def conversation_scope(conversation_id: int) -> str:
    return f"conversation:{conversation_id}"


def playground_scope(run_id: int) -> str:
    return f"playground:{run_id}"


@cache
def _client() -> redis.Redis:
    # Short timeouts: a publisher waits at most this long once, then gives up for the rest of the run.
    return redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=0.5, socket_timeout=0.5)


@cache
def _subscriber_client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=10)


def _shorten(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= SHORT_VALUE_CHARS else value[:SHORT_VALUE_CHARS] + "…"
    if isinstance(value, dict):
        return {str(k): _shorten(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shorten(v) for v in value[:50]]
    return value


def small_data(data: dict[str, Any]) -> dict[str, Any]:
    """`data` as sent live: whole when small (a plan, an artifact's ref), strings shortened when not, and only
    its keys when even that is too big. The debug log shows the full record after the run."""
    try:
        if len(json.dumps(data, default=str)) <= MAX_DATA_CHARS:
            return json.loads(json.dumps(data, default=str))
        shortened = _shorten(json.loads(json.dumps(data, default=str)))
        if len(json.dumps(shortened)) <= MAX_DATA_CHARS:
            return shortened
    except (TypeError, ValueError):
        pass
    return {"truncated": True, "keys": sorted(str(k) for k in data)[:50]}


class LivePublisher(RunHooks):
    """A `RunHooks` that publishes the run's thoughts and events on the scope's channel, with every known
    credential of the run's account replaced (as the debug log does: captain.answering.services.redaction)."""

    def __init__(self, scope: str, *, secrets: Sequence[str] | None = None) -> None:
        self.scope = scope
        self.channel = live_channel(scope)
        self.broken = False
        """Set at the first Redis error: nothing more is published for this run (no retry slows it)."""
        self._secrets: list[str] | None = list(secrets) if secrets is not None else None
        """The account's credentials, read at the first message (None: not yet)."""

    def _known_secrets(self, context: RunContext) -> list[str] | None:
        if self._secrets is None:
            try:
                account_id = context.account_id
                self._secrets = cached(("secrets", account_id), lambda: account_secrets(account_id))
            except Exception:  # the database away: publish nothing rather than risk showing a credential
                logger.exception(
                    "live updates for %s stopped: the account's secrets cannot be read", self.scope
                )
                self.broken = True
                return None
        return self._secrets

    def _publish(self, message: dict[str, Any], context: RunContext | None = None) -> None:
        if self.broken:
            return
        if context is not None:
            secrets = self._known_secrets(context)
            if secrets is None:
                return
            message = scrub(message, secrets)
        message["at"] = time.time()
        try:
            _client().publish(self.channel, json.dumps(message, ensure_ascii=False, default=str))
        except (redis.RedisError, OSError) as exc:
            self.broken = True
            logger.warning("live updates for %s stopped: %s", self.scope, type(exc).__name__)

    def on_thought(self, context: RunContext, agent: Agent, delta: str) -> None:
        if delta:
            self._publish({"type": "thought", "agent": agent.key, "text": delta[:MAX_TEXT_CHARS]}, context)

    def on_event(self, context: RunContext, agent: Agent, event: RunEvent) -> None:
        self._publish(
            {
                "type": "event",
                "agent": agent.key,
                "event": {
                    "type": event.type,
                    "name": event.name,
                    "detail": event.detail[:MAX_TEXT_CHARS],
                    "data": small_data(event.data),
                },
            },
            context,
        )


def live_end(scope: str) -> None:
    """Tell the scope's watchers that the run is over (they reload what was stored). Best effort."""
    try:
        _client().publish(live_channel(scope), json.dumps({"type": "end", "at": time.time()}))
    except (redis.RedisError, OSError) as exc:
        logger.warning("could not publish the end of %s: %s", scope, type(exc).__name__)


class LiveSubscription:
    """One watcher's subscription to a scope. Subscribe before checking whether the run is already over, so an
    `end` published in between is not missed."""

    def __init__(self, scope: str) -> None:
        self.scope = scope
        self._pubsub = _subscriber_client().pubsub(ignore_subscribe_messages=True)
        self._pubsub.subscribe(live_channel(scope))  # raises redis.RedisError when Redis is down

    def messages(self, *, timeout: float) -> Iterator[dict[str, Any]]:
        """The messages that arrive within `timeout` seconds (none when it is quiet)."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            raw = self._pubsub.get_message(timeout=remaining)
            if raw is None:
                continue
            if raw.get("type") != "message":
                continue
            try:
                message = json.loads(raw["data"])
            except (TypeError, ValueError):
                continue
            if isinstance(message, dict):
                yield message

    def close(self) -> None:
        with contextlib.suppress(redis.RedisError, OSError):
            self._pubsub.close()


def conversation_run_in_progress(conversation_id: int) -> bool:
    """True while a run holds the conversation's lock (captain.answering.services.locks): the debug log's live panel."""
    from captain.answering.services.locks import conversation_lock

    try:
        return bool(conversation_lock(conversation_id).lock.locked())
    except (redis.RedisError, OSError):
        return False
