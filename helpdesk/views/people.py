"""People: the password reset form, rate limited per client address so it cannot be used to flood inboxes."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.views import PasswordResetView
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext

from helpdesk.client_address import client_ip
from helpdesk.services.rate_limits import password_reset_check


class RateLimitedPasswordResetView(PasswordResetView):
    """Django's reset view; past PASSWORD_RESETS_PER_HOUR posts from one address (counted in Redis, shared by every
    web process) it answers 429 and sends nothing. The answer never depends on whether the address has an account
    (no enumeration)."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not password_reset_check(client=client_ip(request) or "unknown").allowed:
            return HttpResponse(gettext("Too many reset requests. Please try again later."), status=429)
        return super().post(request, *args, **kwargs)
