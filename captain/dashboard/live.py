"""A run's live events as server-sent events: the stream every live panel (debug log, playground, copilot) reads."""

from __future__ import annotations

from collections.abc import Callable

from asgiref.sync import sync_to_async
from django.http import HttpResponse

from captain.answering.services.live import (
    live_channel,
)
from helpdesk.realtime.hub import get_hub
from helpdesk.realtime.stream import sse_response, sse_stream, unavailable
from helpdesk.views.events import READY_SECONDS

MAX_STREAM_SECONDS = 120.0
HEARTBEAT_SECONDS = 15.0
CHECK_SECONDS = 2.0
RETRY_MS = 2000


async def event_stream(scope: str, *, finished: Callable[[], bool]) -> HttpResponse:
    """The SSE response for one live scope (`playground:<id>`, `conversation:<id>`, `copilot:<run_id>`).

    Call it (awaited) from an async view once access is checked, and only when
    `helpdesk.realtime.stream.can_stream(request)` (else return `no_stream()`: a WSGI server cannot stream).
    `finished` is an ordinary function (it may query the database): true when the run is over, so a stream
    whose `end` was lost still ends. The hub is subscribed before `finished` is first asked, so an `end`
    published in between is not missed.
    """
    hub = get_hub()
    listener = hub.listen(live_channel(scope))
    if not await hub.wait_ready(READY_SECONDS):
        listener.close()
        return unavailable()  # the page falls back to reloading; a 503 tells EventSource not to retry
    frames = sse_stream(
        listener,
        # Thread-sensitive, like every ORM call of a request: this stream keeps a thread for its checks (few
        # people watch a run; the dashboard's account stream, which many tabs hold, has no such checks).
        finished=sync_to_async(finished),
        ends_on="end",
        max_seconds=MAX_STREAM_SECONDS,
        heartbeat_seconds=HEARTBEAT_SECONDS,
        check_seconds=CHECK_SECONDS,
        retry_ms=RETRY_MS,
    )
    return sse_response(frames, listener)
