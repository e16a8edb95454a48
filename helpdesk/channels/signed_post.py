"""A signed JSON POST to a URL someone configured: the API channel's callback and the account's event webhooks.

`X-Helpdesk-Timestamp: <unix seconds>` and `X-Helpdesk-Signature: sha256=<hex HMAC-SHA256(secret, "{ts}.{body}")>`,
plus `X-Helpdesk-Event-Id` so a receiver can drop a repeat. The URL goes through the outbound policy
(helpdesk.outbound). The answer is classified for the retry policy; errors name the status code and our
classification only, never the receiver's body: people read them in the conversation or the delivery log, and a
body (or an HTTP parser's complaint quoting it) can carry whatever the server behind the URL holds.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any

import httpx

from helpdesk.outbound import OutboundRefused, outbound_client

from .base import DeliveryResult

TIMESTAMP_HEADER = "X-Helpdesk-Timestamp"
SIGNATURE_HEADER = "X-Helpdesk-Signature"
EVENT_ID_HEADER = "X-Helpdesk-Event-Id"
SIGNATURE_PREFIX = "sha256="


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The signature header value for `body` sent at `timestamp`."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return SIGNATURE_PREFIX + mac.hexdigest()


def signed_headers(secret: str, body: bytes, *, now: float | None = None) -> dict[str, str]:
    timestamp = str(int(time.time() if now is None else now))
    return {TIMESTAMP_HEADER: timestamp, SIGNATURE_HEADER: sign(secret, timestamp, body)}


def post_signed(
    *, url: str, secret: str, event: dict[str, Any], event_id: str, timeout: float
) -> DeliveryResult:
    """POST `event` signed with `secret`; 2xx is sent, 408/429/5xx and network errors are worth a retry."""
    body = json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode()
    headers = {"Content-Type": "application/json", EVENT_ID_HEADER: event_id, **signed_headers(secret, body)}
    try:
        # Streamed and never read: only the status and headers count, whatever size the body is.
        with (
            outbound_client(timeout=timeout) as client,
            client.stream("POST", url, content=body, headers=headers) as response,
        ):
            status, retry_header = response.status_code, response.headers.get("Retry-After")
    except OutboundRefused as exc:
        return DeliveryResult(
            ok=False, permanent=True, error=f"callback refused by the outbound policy: {exc}"
        )
    except httpx.InvalidURL:
        return DeliveryResult(ok=False, permanent=True, error="The callback URL is not a valid URL.")
    except httpx.TimeoutException:
        return DeliveryResult(ok=False, error=f"callback timed out after {timeout:g} s")
    except httpx.HTTPError as exc:
        return DeliveryResult(ok=False, error=f"network error talking to the callback ({type(exc).__name__})")
    if 200 <= status < 300:
        return DeliveryResult(ok=True, status_code=status)
    # 408/429 and 5xx are the receiver's temporary trouble; any other 4xx will not change on retry, and a
    # redirect is not followed (its target could be anywhere), so it is a configuration error too.
    transient = status in (408, 429) or status >= 500
    note = " (redirects are not followed)" if 300 <= status < 400 else ""
    return DeliveryResult(
        ok=False,
        permanent=not transient,
        error=f"callback answered HTTP {status}{note}",
        retry_after=_retry_after_seconds(retry_header),
        status_code=status,
    )


def _retry_after_seconds(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        return None
