"""A server-sent-events stream over one hub listener: what the dashboard and captain's live panels return.

The stream starts with a `retry:` hint (how long EventSource waits before reconnecting), sends each accepted
message as a `data: <json>` frame, a comment line when it has been quiet for HEARTBEAT_SECONDS (proxies keep the
connection; a closed tab is noticed at the next write), and ends after `max_seconds` so a long-lived connection
does not pin a worker through a deploy: the browser reconnects by itself after `retry` milliseconds. Access is
checked when the stream opens and then again at least every ACCESS_CHECK_SECONDS (`allowed`): a stream lasts
minutes, and a person removed from the account or signed out must not keep receiving its events meanwhile.

Async on purpose: under the ASGI server Django buffers a synchronous iterator whole before sending it, and an
async stream costs an idle coroutine and a small queue instead of a thread.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from asgiref.sync import SyncToAsync
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse

from .hub import Listener

HEARTBEAT_SECONDS = 15.0
MAX_STREAM_SECONDS = 300.0
RETRY_MS = 2000
ACCESS_CHECK_SECONDS = 5.0
"""How stale the answer to "may this person still read this stream?" may be when an event is sent (`allowed`):
the longest a member removed from the account, or a browser that signed out, keeps receiving its events."""


def release_request_thread() -> None:
    """Let the request's sync thread go while the stream stays open.

    Django's ASGI handler gives each request a thread for its synchronous parts (sync-only middleware such as
    WhiteNoise, session and ORM calls) and keeps it until the response is fully sent: for a stream that lasts
    minutes, one idle thread per open tab (about 450 KB each, measured by bench/live_connections.py). Once the
    view has returned, the stream needs no thread, so the request's executor is shut down here; a later
    thread-sensitive call in this request would simply get a new one. Relies on asgiref's per-context executor
    map: if that ever changes, this does nothing and streams just cost their thread again.
    """
    try:
        context = SyncToAsync.thread_sensitive_context.get(None)
        executor = SyncToAsync.context_to_thread_executor.pop(context, None) if context is not None else None
    except (AttributeError, TypeError):
        return
    if executor is not None:
        executor.shutdown(wait=False)


def sse_frame(message: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(message, ensure_ascii=False, default=str)}\n\n".encode()


async def sse_stream(
    listener: Listener,
    *,
    accept: Callable[[dict[str, Any]], bool] | None = None,
    allowed: Callable[[], Awaitable[bool]] | None = None,
    finished: Callable[[], Awaitable[bool]] | None = None,
    ends_on: str | None = None,
    max_seconds: float = MAX_STREAM_SECONDS,
    heartbeat_seconds: float = HEARTBEAT_SECONDS,
    check_seconds: float | None = None,
    retry_ms: int = RETRY_MS,
) -> AsyncIterator[bytes]:
    """Frames for one stream. `accept` filters messages (another person's events); `allowed` re-checks access
    (the view checked it at the start): asked every ACCESS_CHECK_SECONDS, also when quiet, and before sending a
    message that came in once that time has passed, and the stream ends without a word when it answers False
    (the browser's reconnect then meets the view's own answer: the sign-in page or a 404). `finished`, polled
    when quiet every `check_seconds`, ends the stream with an `end` message (a run over without saying so); a
    message of type `ends_on` ends it after being sent. The listener is released however the stream ends."""
    try:
        release_request_thread()
        yield f"retry: {retry_ms}\n: connected\n\n".encode()
        if finished is not None and await finished():
            yield sse_frame({"type": "end", "at": time.time()})
            return
        wait = min(heartbeat_seconds, check_seconds) if check_seconds else heartbeat_seconds
        access_seconds = ACCESS_CHECK_SECONDS  # read here, not as a default, so tests can lower it
        now = time.monotonic()
        deadline, last_sent = now + max_seconds, now
        next_access_check = now + access_seconds if allowed is not None else math.inf
        while (remaining := deadline - time.monotonic()) > 0:
            until_check = max(next_access_check - time.monotonic(), 0.0)
            message = await listener.get(timeout=min(wait, remaining, until_check))
            if allowed is not None and time.monotonic() >= next_access_check:
                # Before the message is sent: a burst of events costs one check, and no event goes out on an
                # answer older than ACCESS_CHECK_SECONDS.
                if not await allowed():
                    return
                next_access_check = time.monotonic() + access_seconds
            if message is not None:
                if accept is None or accept(message):
                    last_sent = time.monotonic()
                    yield sse_frame(message)
                    if ends_on is not None and message.get("type") == ends_on:
                        return
                    continue
            elif finished is not None and await finished():
                yield sse_frame({"type": "end", "at": time.time()})
                return
            if time.monotonic() - last_sent >= heartbeat_seconds:
                last_sent = time.monotonic()
                yield b": heartbeat\n\n"
    finally:
        listener.close()


class SSEResponse(StreamingHttpResponse):
    """A stream that releases its hub listener when the server closes the response, also when the client went
    away before the first frame (the generator then never runs, so its `finally` would not either)."""

    def __init__(self, frames: AsyncIterator[bytes], listener: Listener) -> None:
        super().__init__(frames, content_type="text/event-stream")
        self._listener = listener
        self["Cache-Control"] = "no-cache, no-store"
        self["X-Accel-Buffering"] = "no"  # nginx: pass each event on as it comes

    def close(self) -> None:
        self._listener.close()
        super().close()


def sse_response(frames: AsyncIterator[bytes], listener: Listener) -> HttpResponse:
    return SSEResponse(frames, listener)  # type: ignore[return-value]  # views are typed HttpResponse; Django serves any HttpResponseBase alike


def can_stream(request: HttpRequest) -> bool:
    """Only an ASGI server streams an async response; a WSGI server (config.wsgi) would hold a thread while it
    buffers the whole stream and send nothing. There the stream answers `no_stream()` and pages poll."""
    return isinstance(request, ASGIRequest)


def no_stream() -> HttpResponse:
    """204: the server-sent-events way to say "do not reconnect" without it being an error (a WSGI server)."""
    return HttpResponse(status=204)


def unavailable() -> HttpResponse:
    """Redis is away: 503 tells EventSource not to retry; the page falls back to its slow refresh."""
    return HttpResponse("Live updates are unavailable.", status=503, content_type="text/plain")
