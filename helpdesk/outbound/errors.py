"""What the outbound policy raises. Every message is short and safe to show a tenant admin: it never contains
the URL's path or query (a Telegram bot token lives in the path) nor anything the remote server sent."""

from __future__ import annotations


class OutboundRefused(Exception):
    """A URL or address the policy refuses. `str(exc)` is a short reason safe to show a tenant admin
    (no secrets: never include the URL's path/query, which may hold a bot token)."""


class HostNotResolved(OutboundRefused):
    """The host name does not resolve. Refused when a URL is saved (most likely a typo); while sending, the
    transport reports it as a network error instead, because a DNS outage is temporary."""


class ResponseTooLarge(OutboundRefused):
    """The answer is larger than the response size limit (or compressed, so its real size is unknown)."""
