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

import hmac
import json
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import httpx
from rest_framework import serializers

from helpdesk.conf import helpdesk_setting

from . import rating
from .base import DeliveryResult, InboundContact, InboundMessage, WebhookRejected
from .media import Download, Refused
from .outbound_files import ANY_KIND, OWN_LIMIT, outbound_files, shared_file_url
from .protocol import Received, SentParts, WebhookRequest, not_supported, webhook_json

# The signing scheme is the channel's contract with integrations; it lives in signed_post (event webhooks share
# it) and is named here too, where integrations and tests have always found it.
from .signed_post import EVENT_ID_HEADER as EVENT_ID_HEADER
from .signed_post import SIGNATURE_HEADER as SIGNATURE_HEADER
from .signed_post import SIGNATURE_PREFIX as SIGNATURE_PREFIX
from .signed_post import TIMESTAMP_HEADER as TIMESTAMP_HEADER
from .signed_post import post_signed
from .signed_post import sign as sign
from .signed_post import signed_headers as signed_headers

if TYPE_CHECKING:
    from helpdesk.models import Inbox, Message


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
    """POST a signed event to the inbox's callback URL and classify the answer for the retry policy
    (`signed_post.post_signed`: through the outbound policy, no receiver's body in the errors)."""
    if not callback_url:
        return DeliveryResult(ok=False, permanent=True, error="The inbox has no callback URL.")
    if rating.is_rating_request(event.get("suggestions") or ()):
        event = {**event, "csat": True, "quick_replies": list(rating.RATING_CHOICES)}
    return post_signed(url=callback_url, secret=secret, event=event, event_id=event_id, timeout=timeout)


class ApiChannel:
    """The generic signed API channel as a `Channel` (helpdesk.channels.protocol)."""

    channel_type = "api"
    text_limit: int | None = None
    supports_commands = False
    shows_quick_replies = True
    reply_window_hours: int | None = None
    shows_away_message = False
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
