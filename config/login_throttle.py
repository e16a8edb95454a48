"""How django-axes counts failed sign-ins here (settings AXES_HANDLER and AXES_CLIENT_IP_CALLABLE).

Failures lock a username and, separately, a client address (AXES_LOCKOUT_PARAMETERS). Two choices differ from
axes' defaults:

- A successful sign-in clears the failures recorded against that username only. Axes' own reset deletes every
  failure that matches any lockout parameter, the client address included, so anyone with a working account
  could sign in between guesses and wipe the count against another user's name from the same address.
- Behind reverse proxies (DJANGO_TRUSTED_PROXY_COUNT) the client is the address the outermost trusted proxy
  saw, not the proxy itself (`helpdesk.client_address`, shared with the webhooks' failed-authentication limit).
"""

from __future__ import annotations

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username
from axes.models import AccessAttempt
from django.http import HttpRequest

from helpdesk.client_address import client_ip

__all__ = ["LoginAttempts", "client_ip"]


class LoginAttempts(AxesDatabaseHandler):
    def reset_user_attempts(self, request: HttpRequest, credentials: dict | None = None) -> int:
        username = get_client_username(request, credentials)
        if username is None:
            return 0
        count, _ = AccessAttempt.objects.filter(username=username).delete()
        return count
