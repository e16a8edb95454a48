"""The generic signed API channel.

Inbound: `POST /webhooks/api/<webhook_token>/` with a JSON body and two headers,
`X-Helpdesk-Timestamp: <unix seconds>` and `X-Helpdesk-Signature: sha256=<hex HMAC-SHA256(secret, "{ts}.{body}")>`.
Outbound: the same scheme, our side signing, POSTed to the inbox's callback URL (the event is
`outbound_event`), one event per message whatever its length. A reply offered with follow-up questions carries them as
`"suggestions": ["...", ...]` (at most 3); the customer's choice comes back as an ordinary inbound message with
that text. Without suggestions the key is absent.
A satisfaction rating request (helpdesk.channels.rating) is the one event with `"csat": true`; its
`"suggestions"` are `["1", "2", "3", "4", "5"]` and `"quick_replies"` repeats them. The customer answers with an
ordinary inbound message whose text is the number ("4"); a comment may follow in the next message.
Files a person attached to a reply are listed in the event as `"attachments": [{"url", "file_name",
"content_type", "size"}]`: signed links to us that open the file without a login for 30 days (absent when there are
none).
The integration receives links, not files from a provider API, and has no command menu or taps to acknowledge:
`fetch_media` refuses, `set_commands` is not supported, `answer_callback` answers False.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import httpx
from rest_framework import serializers

from helpdesk.conf import helpdesk_setting
from helpdesk.outbound import OutboundRefused, outbound_client

from . import rating
from .base import DeliveryResult, InboundContact, InboundMessage, WebhookRejected
from .media import Download, Refused
from .outbound_files import ANY_KIND, OWN_LIMIT, outbound_files, shared_file_url
from .protocol import Received, SentParts, WebhookRequest, not_supported, webhook_json

if TYPE_CHECKING:
    from helpdesk.models import Inbox, Message

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


def verify(
    *, secret: str, headers: Mapping[str, str], body: bytes, window_seconds: int, now: float | None = None
) -> None:
    """Raise WebhookRejected(401) unless the body carries a fresh, valid signature made with `secret`."""
    timestamp = headers.get(TIMESTAMP_HEADER, "")
    signature = headers.get(SIGNATURE_HEADER, "")
    if not timestamp or not signature:
        raise WebhookRejected(
            401, "signature_missing", f"{TIMESTAMP_HEADER} and {SIGNATURE_HEADER} are required."
        )
    try:
        sent_at = int(timestamp)
    except ValueError as exc:
        raise WebhookRejected(401, "timestamp_invalid", "Timestamp must be integer unix seconds.") from exc
    current = time.time() if now is None else now
    if abs(current - sent_at) > window_seconds:
        raise WebhookRejected(
            401, "timestamp_expired", f"Timestamp is outside the {window_seconds} s window."
        )
    expected = sign(secret, timestamp, body)
    # compare_digest on bytes: constant time, and non-ASCII header junk cannot raise a TypeError.
    if not hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace")):
        raise WebhookRejected(401, "signature_invalid", "Signature does not match.")


class _ContactSerializer(serializers.Serializer):
    id = serializers.CharField(max_length=255)
    name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    email = serializers.EmailField(required=False, allow_blank=True, default="")


class _PayloadSerializer(serializers.Serializer):
    message_id = serializers.CharField(max_length=255)
    contact = _ContactSerializer()
    text = serializers.CharField(max_length=10_000, trim_whitespace=False)


def parse(payload: Any) -> list[InboundMessage]:
    """Validate the decoded body and turn it into one InboundMessage."""
    if not isinstance(payload, dict):
        raise WebhookRejected(400, "invalid_payload", "Body must be a JSON object.")
    serializer = _PayloadSerializer(data=payload)
    if not serializer.is_valid():
        raise WebhookRejected(400, "invalid_payload", json.dumps(serializer.errors))
    data = serializer.validated_data
    contact = data["contact"]
    return [
        InboundMessage(
            provider_message_id=data["message_id"],
            contact=InboundContact(source_id=contact["id"], name=contact["name"], email=contact["email"]),
            text=data["text"],
        )
    ]


def outbound_event(message: Message) -> dict[str, Any]:
    """The JSON event POSTed to the callback URL for one outgoing message."""
    return {
        "event": "message.created",
        "message_id": message.id,
        "conversation_id": message.conversation_id,
        "contact_id": message.conversation.contact_inbox.source_id,
        "text": message.content,
        "sender": {
            "type": message.sender_type,
            "agent_key": message.ai_agent_key or None,
            "name": message.ai_agent_name or None,
        },
        "created_at": message.created_at.isoformat(),
        # Only when there are some, so a receiver sees exactly the event it always did otherwise.
        **({"suggestions": list(message.quick_replies)} if message.quick_replies else {}),
        **({"attachments": files} if (files := _attachment_links(message)) else {}),
    }


def _attachment_links(message: Message) -> list[dict[str, Any]]:
    """The files a person attached, as signed links the receiver fetches (no login; they expire)."""
    return [
        {
            "url": shared_file_url(file.attachment_id),
            "file_name": file.file_name,
            "content_type": file.content_type,
            "size": file.size,
        }
        for file in outbound_files(message)
    ]


def send(
    *, callback_url: str, secret: str, event: dict[str, Any], event_id: str, timeout: float
) -> DeliveryResult:
    """POST a signed event to the inbox's callback URL and classify the answer for the retry policy.

    The URL goes through the outbound policy (helpdesk.outbound). Errors name the status code and our
    classification only, never the receiver's body: people read them in the conversation, and a body (or an
    HTTP parser's complaint quoting it) can carry whatever the server behind the URL holds."""
    if not callback_url:
        return DeliveryResult(ok=False, permanent=True, error="The inbox has no callback URL.")
    if rating.is_rating_request(event.get("suggestions") or ()):
        event = {**event, "csat": True, "quick_replies": list(rating.RATING_CHOICES)}
    body = json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode()
    headers = {"Content-Type": "application/json", EVENT_ID_HEADER: event_id, **signed_headers(secret, body)}
    try:
        # Streamed and never read: only the status and headers count, whatever size the body is.
        with (
            outbound_client(timeout=timeout) as client,
            client.stream("POST", callback_url, content=body, headers=headers) as response,
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


class ApiChannel:
    """The generic signed API channel as a `Channel` (helpdesk.channels.protocol)."""

    channel_type = "api"
    text_limit: int | None = None
    supports_commands = False
    shows_quick_replies = True
    fetches_media = False
    # The event links the files; we serve them ourselves.
    file_limits: Mapping[str, int] = {ANY_KIND: OWN_LIMIT}
    files_total_limit: int | None = None
    request_limit: int | None = None

    def verify(self, inbox: Inbox, request: WebhookRequest) -> None:
        verify(
            secret=inbox.secret,
            headers=request.headers,
            body=request.body,
            window_seconds=helpdesk_setting("WEBHOOK_REPLAY_WINDOW_SECONDS"),
        )

    def parse(self, inbox: Inbox, request: WebhookRequest) -> Received:
        return Received(messages=parse(webhook_json(request.body)))

    def send(self, message: Message, *, timeout: float, parts: SentParts) -> DeliveryResult:
        # One event whatever the length: there are no parts to resume.
        inbox = message.inbox
        return send(
            callback_url=inbox.callback_url,
            secret=inbox.secret,
            event=outbound_event(message),
            event_id=f"message-{message.id}",
            timeout=timeout,
        )

    def fetch_media(self, client: httpx.Client, inbox: Inbox, provider_ref: str) -> Download:
        raise Refused("this channel has no provider API to fetch files from")

    def set_commands(
        self, inbox: Inbox, commands: Sequence[tuple[str, str]], *, timeout: float = 10.0
    ) -> DeliveryResult:
        return not_supported("command menu")

    def answer_callback(
        self, inbox: Inbox, callback_id: str, *, text: str = "", timeout: float = 5.0
    ) -> bool:
        return False  # the integration's messages are never taps waiting for an answer
