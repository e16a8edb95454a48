"""`.../events/`: the account's dashboard events as server-sent events (helpdesk.realtime).

One stream per open dashboard tab, served by the process' hub (one Redis subscription per web process, not one
per browser). The stream carries ids and small facts only; the page fetches what changed through the ordinary,
access-checked views. Events addressed to one person (`user_id`) reach that person's streams only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path
from django.views.decorators.http import require_GET

from helpdesk.models import Membership
from helpdesk.realtime.hub import get_hub
from helpdesk.realtime.publish import account_channel
from helpdesk.realtime.stream import can_stream, no_stream, sse_response, sse_stream, unavailable
from helpdesk.selectors import access_membership

from .base import ACCOUNT

READY_SECONDS = 2.0
"""How long a new stream waits for the process' Redis subscription before answering 503."""


async def stream_membership(
    request: HttpRequest, account_id: int, *, admin_only: bool = False
) -> Membership | HttpResponse:
    """`account_view`'s checks for an async view: the login page for a visitor, 404 for a non-member, 403 for an
    agent on an administrators' stream. Returns the membership, or the response to send instead."""
    user = await request.auser()
    if not user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    membership: Membership = await sync_to_async(access_membership)(user=user, account_id=account_id)
    if admin_only and membership.role != Membership.Role.ADMIN:
        raise PermissionDenied("Only administrators of this account may open this page.")
    return membership


def for_person(user_id: int) -> Callable[[dict[str, Any]], bool]:
    """Accept the account's events, and of those addressed to one person, only this person's."""

    def accept(event: dict[str, Any]) -> bool:
        addressed = event.get("user_id")
        return addressed is None or addressed == user_id

    return accept


@require_GET
async def account_events(request: HttpRequest, account_id: int) -> HttpResponse:
    access = await stream_membership(request, account_id)
    if isinstance(access, HttpResponse):
        return access
    if not can_stream(request):
        return no_stream()
    hub = get_hub()
    listener = hub.listen(account_channel(access.account_id))
    if not await hub.wait_ready(READY_SECONDS):
        listener.close()
        return unavailable()
    return sse_response(sse_stream(listener, accept=for_person(access.user_id)), listener)


urlpatterns: list[URLPattern] = [
    path(f"{ACCOUNT}events/", account_events, name="account-events"),
]
