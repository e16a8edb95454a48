"""Mailgun's inbound routes: `POST /webhooks/email/<webhook_token>/` with the raw mail.

Set the route's action to `forward("https://<helpdesk>/webhooks/email/<token>/mime")`-style raw MIME delivery,
i.e. a form with `body-mime` (the whole mail as received), `timestamp`, `token` and `signature`, where signature =
hex HMAC-SHA256(the Mailgun webhook signing key, timestamp + token). The signing key is the inbox's secret.
A request older or newer than the replay window is refused; a replay inside it carries the same Message-ID and is
answered `duplicate` without storing anything again.
"""

from __future__ import annotations

import email.policy
import hashlib
import hmac
import time
from email.parser import BytesParser
from urllib.parse import parse_qs

from ..base import WebhookRejected

MAX_FIELDS = 200


def signature(signing_key: str, timestamp: str, token: str) -> str:
    return hmac.new(signing_key.encode(), (timestamp + token).encode(), hashlib.sha256).hexdigest()


def form_fields(content_type: str, body: bytes) -> dict[str, bytes]:
    """The fields of a multipart/form-data or urlencoded body (the first value of each name)."""
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind == "application/x-www-form-urlencoded":
        try:
            pairs = parse_qs(body.decode("utf-8"), keep_blank_values=True, max_num_fields=MAX_FIELDS)
        except (UnicodeDecodeError, ValueError) as exc:
            raise WebhookRejected(400, "invalid_form", "The form body could not be read.") from exc
        return {name: values[0].encode() for name, values in pairs.items()}
    if kind != "multipart/form-data" or "boundary=" not in content_type:
        raise WebhookRejected(400, "invalid_form", "Expected multipart/form-data with a boundary.")
    try:
        form = BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body
        )
        fields: dict[str, bytes] = {}
        for part in form.iter_parts() if form.is_multipart() else ():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            if isinstance(name, str) and isinstance(payload, bytes) and name not in fields:
                fields[name] = payload
            if len(fields) >= MAX_FIELDS:
                break
    except Exception as exc:  # the stdlib parser is lenient; anything it still raises is a broken form
        raise WebhookRejected(400, "invalid_form", "The form body could not be read.") from exc
    return fields


def verify(
    *, signing_key: str, fields: dict[str, bytes], window_seconds: int, now: float | None = None
) -> None:
    """Raise WebhookRejected(401) unless the form carries a fresh, valid Mailgun signature."""
    try:
        timestamp, token, given = (
            fields.get(k, b"").decode("ascii") for k in ("timestamp", "token", "signature")
        )
    except UnicodeDecodeError:
        raise WebhookRejected(401, "signature_invalid", "Signature fields must be ASCII.") from None
    if not (timestamp and token and given):
        raise WebhookRejected(401, "signature_missing", "timestamp, token and signature are required.")
    try:
        sent_at = int(timestamp)
    except ValueError:
        raise WebhookRejected(401, "timestamp_invalid", "timestamp must be unix seconds.") from None
    if abs((time.time() if now is None else now) - sent_at) > window_seconds:
        raise WebhookRejected(
            401, "timestamp_expired", f"timestamp is outside the {window_seconds} s window."
        )
    if not hmac.compare_digest(signature(signing_key, timestamp, token).encode(), given.encode()):
        raise WebhookRejected(401, "signature_invalid", "Signature does not match.")
