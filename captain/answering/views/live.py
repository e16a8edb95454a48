"""Server-sent events: a run's thoughts and events as they happen, for the playground and the debug log.

Each stream relays the scope's Redis channel (captain.answering.services.live) through the web process' hub
(helpdesk.realtime.hub: one Redis subscription per process, not one per browser) as `data: <json>` frames,
sends a comment line as a heartbeat when it is quiet (so proxies keep the connection and a closed tab is
noticed), and ends on the run's `end` message, when the run is over without having said so, or after
MAX_STREAM_SECONDS (the browser reconnects by itself). Async views: under the ASGI server Django would buffer a
synchronous stream whole. Same access as the pages they feed: the account's administrators only, another
tenant's run or conversation is a 404.
"""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from captain.answering.services.live import (
    conversation_run_in_progress,
    conversation_scope,
    playground_scope,
)
from captain.dashboard.live import event_stream
from captain.playground.selectors import access_playground_run, playground_run_done
from helpdesk.realtime.stream import can_stream, no_stream
from helpdesk.selectors import dashboard_conversation
from helpdesk.views.events import stream_membership

"""When quiet, how often the stream checks whether the run is over without having said so."""
"""How long the browser waits before reconnecting a stream that ended without `end`."""


@require_GET
async def playground_run_live(request: HttpRequest, account_id: int, run_id: int) -> HttpResponse:
    """`.../playground/runs/<run_id>/live`: the thoughts and events of one playground turn."""
    access = await stream_membership(request, account_id, admin_only=True)
    if isinstance(access, HttpResponse):
        return access
    await sync_to_async(access_playground_run)(account_id=access.account_id, run_id=run_id)

    def finished() -> bool:
        return playground_run_done(run_id=run_id)

    if not can_stream(request):
        return no_stream()
    return await event_stream(playground_scope(run_id), finished=finished)


@require_GET
async def conversation_live(request: HttpRequest, account_id: int, conversation_id: int) -> HttpResponse:
    """`.../conversations/<id>/live`: the thoughts and events of the conversation's runs while they run."""
    access = await stream_membership(request, account_id, admin_only=True)
    if isinstance(access, HttpResponse):
        return access
    conversation = await sync_to_async(dashboard_conversation)(
        account_id=access.account_id, conversation_id=conversation_id
    )

    def finished() -> bool:
        return not conversation_run_in_progress(conversation.id)

    if not can_stream(request):
        return no_stream()
    return await event_stream(conversation_scope(conversation.id), finished=finished)
