"""People: the password reset form, rate limited per client address so it cannot be used to flood inboxes."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.views import PasswordResetView
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext

from helpdesk.client_address import client_ip

RESET_WINDOW_SECONDS = 3600


class RateLimitedPasswordResetView(PasswordResetView):
    """Django's reset view; after PASSWORD_RESET_LIMIT posts from one address in an hour it answers 429 and
    sends nothing. The answer never depends on whether the address has an account (no enumeration)."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        key = f"password-reset:{client_ip(request) or 'unknown'}"
        cache.add(key, 0, RESET_WINDOW_SECONDS)
        if cache.incr(key) > getattr(settings, "PASSWORD_RESET_LIMIT", 5):
            return HttpResponse(gettext("Too many reset requests. Please try again later."), status=429)
        return super().post(request, *args, **kwargs)
