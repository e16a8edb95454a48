"""Who the client is, for per-client limits (failed webhook authentications, sign-in lockout).

Behind reverse proxies (settings.TRUSTED_PROXY_COUNT, env DJANGO_TRUSTED_PROXY_COUNT) REMOTE_ADDR is the proxy,
so every client would share one counter: one noisy client would lock everyone out.
"""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest


def client_ip(request: HttpRequest) -> str | None:
    """The client's address: REMOTE_ADDR, or the X-Forwarded-For entry added by the outermost trusted proxy.

    Each proxy appends the address it received the request from, so with N trusted proxies the N-th entry from
    the right is the client; entries further left are whatever the client sent and are ignored. A header too
    short or holding something that is no IP address (a misconfigured proxy) falls back to REMOTE_ADDR.
    """
    remote = request.META.get("REMOTE_ADDR")
    count = int(getattr(settings, "TRUSTED_PROXY_COUNT", 0))
    if count <= 0:
        return remote
    forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if a.strip()]
    if len(forwarded) < count:
        return remote
    candidate = forwarded[-count]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return remote
