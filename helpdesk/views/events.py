"""`.../events/`: the account's dashboard events as server-sent events (helpdesk.realtime).

One stream per open dashboard tab, served by the process' hub (one Redis subscription per web process, not one
per browser). The stream carries ids and small facts only; the page fetches what changed through the ordinary,
access-checked views. Events addressed to one person (`user_id`) reach that person's streams only. A stream
lasts minutes, so access is checked again while it is open (`stream_access_holds`, every
helpdesk.realtime.stream.ACCESS_CHECK_SECONDS): removed from the account or signed out, the stream ends.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from importlib import import_module
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth import HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.db import close_old_connections
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path
from django.utils.crypto import constant_time_compare
from django.views.decorators.http import require_GET

from helpdesk.models import Membership
from helpdesk.realtime.hub import get_hub
from helpdesk.realtime.publish import account_channel
from helpdesk.realtime.stream import can_stream, no_stream, sse_response, sse_stream, unavailable
from helpdesk.selectors import access_membership, membership_with_user
from helpdesk.selectors.visibility import hidden_inbox_ids

from .base import ACCOUNT

logger = logging.getLogger(__name__)

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


def for_person(
    user_id: int, hidden_inboxes: frozenset[int] = frozenset()
) -> Callable[[dict[str, Any]], bool]:
    """Accept the account's events, and of those addressed to one person, only this person's; none about the
    inboxes in `hidden_inboxes` (those the person does not see, helpdesk.selectors.visibility; read when the
    stream opens, and a reconnect reads them again)."""

    def accept(event: dict[str, Any]) -> bool:
        addressed = event.get("user_id")
        if event.get("inbox_id") in hidden_inboxes and event.get("assignee_id") != user_id:
            return False  # a conversation event of a conversation assigned to them still arrives
        return addressed is None or addressed == user_id

    return accept


def stream_access_holds(*, session_key: str | None, user_id: int, account_id: int) -> bool:
    """Would this stream still be opened for this browser? Its session still signs in the same active person
    (gone after a sign-out, which deletes the session; stale after a password change elsewhere) and that person
    is still a member of the account. Two indexed reads, and nothing written: Django's own `get_user` would
    flush or re-key a session it rejects, and this browser never gets the new cookie on a stream.

    Runs in the shared thread pool, not in a request, so the connection is recycled here as a request would
    (CONN_MAX_AGE, a connection broken by an error). Any failure ends the stream: the browser reconnects and
    the view decides again."""
    if session_key is None:
        return False  # signed in without a session: nothing to re-check it against, so no long stream
    close_old_connections()
    try:
        session = import_module(settings.SESSION_ENGINE).SessionStore(session_key).load()
        if str(session.get(SESSION_KEY)) != str(user_id):
            return False
        membership = membership_with_user(user_id=user_id, account_id=account_id)
        if membership is None or not membership.user.is_active:
            return False
        user, signed = membership.user, str(session.get(HASH_SESSION_KEY, ""))
        hashes = [user.get_session_auth_hash(), *user.get_session_auth_fallback_hash()]
        return any(constant_time_compare(signed, current) for current in hashes)
    except Exception:
        logger.warning("live updates: access check failed, ending the stream", exc_info=True)
        return False
    finally:
        close_old_connections()


def access_check(request: HttpRequest, membership: Membership) -> Callable[[], Awaitable[bool]]:
    """`stream_access_holds` for this request's stream, as `sse_stream(allowed=...)` wants it.

    Not thread-sensitive: the stream has let the request's thread go (release_request_thread, the memory an
    open tab costs), and a thread-sensitive call would start a new one for the life of the stream."""
    session_key = request.session.session_key
    check = sync_to_async(stream_access_holds, thread_sensitive=False)

    async def allowed() -> bool:
        return await check(
            session_key=session_key, user_id=membership.user_id, account_id=membership.account_id
        )

    return allowed


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
    hidden = await sync_to_async(hidden_inbox_ids)(account_id=access.account_id, user_id=access.user_id)
    frames = sse_stream(
        listener, accept=for_person(access.user_id, frozenset(hidden)), allowed=access_check(request, access)
    )
    return sse_response(frames, listener)


urlpatterns: list[URLPattern] = [
    path(f"{ACCOUNT}events/", account_events, name="account-events"),
]
