"""Where a stored secret may go: a write-only secret (a custom tool's credential, a model endpoint's API key)
belongs to the destination it was given for.

When a builder changes a tool's URL or an endpoint's base URL to another scheme, host or port and does not give
the secret again, the stored one is dropped: otherwise editing one field of a tool (or a compromised admin
session) would send the stored bearer token of `https://api.shop.example` to any host the outbound policy
allows. A path change on the same origin keeps it.
"""

from __future__ import annotations

import httpx

_DEFAULT_PORTS = {"http": 80, "https": 443}

Origin = tuple[str, str, int | None]


def url_origin(url: str) -> Origin | None:
    """(scheme, host, port) of `url` with the scheme's default port made explicit; None when it is no URL."""
    try:
        parsed = httpx.URL(url.strip())
    except (httpx.InvalidURL, TypeError):
        return None
    if not parsed.scheme or not parsed.host:
        return None
    return (
        parsed.scheme.lower(),
        parsed.host.lower(),
        parsed.port or _DEFAULT_PORTS.get(parsed.scheme.lower()),
    )


def secret_stays(before: Origin | None, after: Origin | None) -> bool:
    """Whether a secret given for `before` may stay for `after`: only for the same known origin."""
    return before is not None and before == after


SECRET_DROPPED_MESSAGE = (
    "The stored secret was removed because the destination (scheme, host or port) changed: "
    "enter it again for the new address."
)
"""What the API and the admin tell a builder whose change dropped the secret."""
