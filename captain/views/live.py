"""Server-sent events: a run's thoughts and events as they happen, for the playground and the debug log.

Each stream relays the scope's Redis channel (captain.services.live) as `data: <json>` lines, sends a comment
line as a heartbeat when it is quiet (so proxies keep the connection and a closed tab is noticed), and ends on
the run's `end` message or after MAX_STREAM_SECONDS (the browser reconnects by itself; a gthread worker is not
held longer than that). Same access as the pages they feed: the account's administrators only, another
tenant's run or conversation is a 404.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Generator, Iterator
from typing import cast

import redis
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.views.decorators.http import require_GET

from helpdesk.models import Membership
from helpdesk.selectors import dashboard_conversation
from helpdesk.views.base import account_view

from ..models import PlaygroundRun
from ..services.live import (
    LiveSubscription,
    conversation_run_in_progress,
    conversation_scope,
    playground_scope,
)

logger = logging.getLogger(__name__)

MAX_STREAM_SECONDS = 120.0
HEARTBEAT_SECONDS = 15.0
CHECK_SECONDS = 2.0
"""When quiet, how often the stream checks whether the run is over without having said so."""
RETRY_MS = 2000
"""How long the browser waits before reconnecting a stream that ended without `end`."""


def _frame(message: dict[str, object]) -> bytes:
    return f"data: {json.dumps(message, ensure_ascii=False)}\n\n".encode()


def _stream(subscription: LiveSubscription, *, finished: Callable[[], bool]) -> Generator[bytes]:
    try:
        yield f"retry: {RETRY_MS}\n: connected\n\n".encode()
        if finished():  # over before we subscribed: say so now, the page reloads what was stored
            yield _frame({"type": "end", "at": time.time()})
            return
        deadline = time.monotonic() + MAX_STREAM_SECONDS
        last_sent = time.monotonic()
        while (remaining := deadline - time.monotonic()) > 0:
            quiet = True
            for message in subscription.messages(timeout=min(CHECK_SECONDS, remaining)):
                quiet = False
                last_sent = time.monotonic()
                yield _frame(message)
                if message.get("type") == "end":
                    return
            if not quiet:
                continue
            # A run whose `end` was lost (a killed worker, Redis away for a moment) still ends the stream.
            if finished():
                yield _frame({"type": "end", "at": time.time()})
                return
            if time.monotonic() - last_sent >= HEARTBEAT_SECONDS:
                last_sent = time.monotonic()
                yield b": heartbeat\n\n"
    except (redis.RedisError, OSError) as exc:
        logger.warning("live stream %s stopped: %s", subscription.scope, type(exc).__name__)
    finally:
        subscription.close()


class _EventStream:
    """The stream as Django's response holds it: `close()` (called by the WSGI server when the response is done
    or the client went away) releases the Redis subscription even if the stream never started."""

    def __init__(self, subscription: LiveSubscription, finished: Callable[[], bool]) -> None:
        self._subscription = subscription
        self._frames = _stream(subscription, finished=finished)

    def __iter__(self) -> Iterator[bytes]:
        return self._frames

    def close(self) -> None:
        self._frames.close()
        self._subscription.close()


def _event_stream(scope: str, *, finished: Callable[[], bool]) -> HttpResponse:
    try:
        subscription = LiveSubscription(scope)
    except (redis.RedisError, OSError):
        # The page falls back to reloading; a 503 tells EventSource not to retry.
        return HttpResponse("Live updates are unavailable.", status=503, content_type="text/plain")
    response = StreamingHttpResponse(_EventStream(subscription, finished), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache, no-store"
    response["X-Accel-Buffering"] = "no"  # nginx: pass each event on as it comes
    # `account_view` is typed for HttpResponse; Django serves any HttpResponseBase the same way.
    return cast(HttpResponse, response)


@require_GET
@account_view(admin_only=True)
def playground_run_live(request: HttpRequest, membership: Membership, run_id: int) -> HttpResponse:
    """`.../playground/runs/<run_id>/live`: the thoughts and events of one playground turn."""
    if not PlaygroundRun.objects.filter(pk=run_id, account_id=membership.account_id).exists():
        raise Http404("No such playground run.")

    def finished() -> bool:
        return PlaygroundRun.objects.filter(pk=run_id, status=PlaygroundRun.Status.DONE).exists()

    return _event_stream(playground_scope(run_id), finished=finished)


@require_GET
@account_view(admin_only=True)
def conversation_live(request: HttpRequest, membership: Membership, conversation_id: int) -> HttpResponse:
    """`.../conversations/<id>/live`: the thoughts and events of the conversation's runs while they run."""
    conversation = dashboard_conversation(account_id=membership.account_id, conversation_id=conversation_id)

    def finished() -> bool:
        return not conversation_run_in_progress(conversation.id)

    return _event_stream(conversation_scope(conversation.id), finished=finished)
