"""The copilot's endpoints on the conversation page (captain.copilot.services.copilot): start a run, read its result, and
follow its text as it is generated. For every member of the account (agents and administrators alike: it is a
tool for whoever answers). A run is read and followed only by the person who asked for it
(`captain.copilot.selectors.access_copilot_run`): it holds their text and the copilot's answer to them, so another
member's run, like another account's, is a 404.

    POST .../conversations/<id>/copilot/        kind=draft|summary|rephrase|fix_tone|translate [text=...]
         202 {"id", "status_url", "stream_url"}  or 400 {"error": "<a sentence for the agent>"}
    GET  .../copilot/runs/<run_id>/             {"id", "kind", "status", "finished", "output", "sources", "error"}
    GET  .../copilot/runs/<run_id>/stream       server-sent events: {"type": "thought", "text": "<piece>"} ...
                                                 then {"type": "end"} (captain.answering.services.live's message shapes)
"""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from captain.copilot.selectors import access_copilot_run, copilot_run_finished
from captain.copilot.services.copilot import (
    CopilotRefused,
    copilot_request,
    copilot_run_result,
    copilot_scope,
)
from captain.dashboard.live import event_stream
from helpdesk.models import Membership
from helpdesk.selectors import access_conversation
from helpdesk.views.base import account_view
from helpdesk.views.events import stream_membership


def copilot_urls(account_id: int, run_id: int) -> dict[str, str]:
    return {
        "status_url": reverse("captain-dashboard:copilot-run", args=[account_id, run_id]),
        "stream_url": reverse("captain-dashboard:copilot-run-stream", args=[account_id, run_id]),
    }


@require_POST
@account_view()
def copilot_start(request: HttpRequest, membership: Membership, conversation_id: int) -> HttpResponse:
    conversation = access_conversation(
        account_id=membership.account_id, conversation_id=conversation_id, user=request.user
    )
    try:
        run = copilot_request(
            conversation=conversation,
            user=request.user,  # type: ignore[arg-type]  # account_view: always a signed-in user
            kind=request.POST.get("kind", ""),
            input_text=request.POST.get("text", ""),
        )
    except CopilotRefused as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    return JsonResponse({"id": run.pk, **copilot_urls(membership.account_id, run.pk)}, status=202)


@require_GET
@account_view()
def copilot_run_status(request: HttpRequest, membership: Membership, run_id: int) -> HttpResponse:
    run = access_copilot_run(account_id=membership.account_id, user_id=membership.user_id, run_id=run_id)
    response = JsonResponse(copilot_run_result(run))
    response["Cache-Control"] = "no-store"
    return response


@require_GET
async def copilot_run_stream(request: HttpRequest, account_id: int, run_id: int) -> HttpResponse:
    """The run's text as it is generated. A run that is already over gets `end` at once (the page then reads
    the status view)."""
    access = await stream_membership(request, account_id)
    if isinstance(access, HttpResponse):
        return access
    # Another member's run, like another account's, is a 404.
    await sync_to_async(access_copilot_run)(
        account_id=access.account_id, user_id=access.user_id, run_id=run_id
    )

    def finished() -> bool:
        return copilot_run_finished(run_id=run_id)

    return await event_stream(copilot_scope(run_id), finished=finished)
