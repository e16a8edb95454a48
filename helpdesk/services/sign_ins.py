"""Sign-in history: every sign-in and refused attempt, recorded from Django's auth signals, and its retention.

Django sends `user_logged_in` / `user_login_failed` for the dashboard's sign-in and the admin's alike, so one
receiver covers both. A wrong two-factor code is sent as a `user_login_failed` too (helpdesk.views.sign_in), with
`two_factor` in its credentials: django-axes counts it towards the same lockout as a wrong password.
"""

from __future__ import annotations

import datetime
import time
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.http import HttpRequest

from helpdesk.client_address import client_ip
from helpdesk.models import SignInEvent

PURGE_BATCH = 5000
PURGE_SECONDS = 40.0


def sign_in_record(*, request: HttpRequest | None, username: str, user: Any, outcome: str) -> SignInEvent:
    """Store one sign-in or attempt with the client's address and browser (cut to the column's length)."""
    meta = request.META if request is not None else {}
    address = client_ip(request) if request is not None and meta.get("REMOTE_ADDR") else None
    return SignInEvent.objects.create(
        user=user if user is not None and user.pk else None,
        username=(username or "")[:150],
        outcome=outcome,
        ip_address=address,
        user_agent=str(meta.get("HTTP_USER_AGENT", ""))[:300],
    )


def _signed_in(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    # The two-factor step sets the device on the user before `login()` (django-otp then marks the session).
    two_factor = getattr(user, "otp_device", None) is not None
    outcome = SignInEvent.Outcome.SIGNED_IN_TWO_FACTOR if two_factor else SignInEvent.Outcome.SIGNED_IN
    sign_in_record(request=request, username=user.get_username(), user=user, outcome=outcome)


def _sign_in_failed(
    sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **kw: Any
) -> None:
    username = str(credentials.get(get_user_model().USERNAME_FIELD) or credentials.get("username") or "")
    if request is not None and getattr(request, "axes_locked_out", False):
        # Axes locked the username or address with this attempt, or refused it unchecked for an earlier lock.
        outcome = SignInEvent.Outcome.LOCKED_OUT
    elif credentials.get("two_factor"):
        outcome = SignInEvent.Outcome.WRONG_CODE
    else:
        outcome = SignInEvent.Outcome.WRONG_PASSWORD
    user = get_user_model()._default_manager.filter(**{get_user_model().USERNAME_FIELD: username}).first()
    sign_in_record(request=request, username=username, user=user, outcome=outcome)


def code_failure_record(*, request: HttpRequest, username: str) -> None:
    """A wrong two-factor code counts like a wrong password: sent as a failed sign-in, so the history records it
    (`_sign_in_failed`) and django-axes counts it towards the lockout (it sets `request.axes_locked_out`)."""
    credentials = {get_user_model().USERNAME_FIELD: username, "two_factor": True}
    user_login_failed.send(sender=__name__, credentials=credentials, request=request)


def connect_signals() -> None:
    user_logged_in.connect(_signed_in, dispatch_uid="helpdesk.sign_in_history")
    user_login_failed.connect(_sign_in_failed, dispatch_uid="helpdesk.sign_in_history_failed")


def sign_ins_purge(*, older_than: datetime.datetime) -> int:
    """Delete history recorded before `older_than` in short batches for at most `PURGE_SECONDS` (the next sweep
    goes on); returns how many went."""
    started, total = time.monotonic(), 0
    while True:
        batch = SignInEvent.objects.filter(created_at__lt=older_than).order_by().values("pk")[:PURGE_BATCH]
        deleted, _ = SignInEvent.objects.filter(pk__in=batch).delete()
        total += deleted
        if deleted < PURGE_BATCH or time.monotonic() - started >= PURGE_SECONDS:
            return total
