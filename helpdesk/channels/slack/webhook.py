"""Slack inbound: the request signature, the Events API's message events and the interactivity requests (taps
on our buttons), each as the customer's messages."""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from .. import rating
from ..base import InboundContact, InboundMessage, WebhookRejected
from ..provider_http import dict_or_empty, list_or_empty
from .blocks import QUICK_REPLY_ACTION_PREFIX, RATING_ACTION_PREFIX

TIMESTAMP_HEADER = "X-Slack-Request-Timestamp"
SIGNATURE_HEADER = "X-Slack-Signature"
SIGNATURE_VERSION = "v0"
REPLAY_WINDOW_SECONDS = 300  # Slack's own recommendation; a request older than this is refused as a replay

# Message subtypes that are still a person writing to us; every other subtype is an edit, a bot or a notice.
_CUSTOMER_SUBTYPES = frozenset({None, "file_share", "thread_broadcast"})


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The X-Slack-Signature value Slack sends for `body` at `timestamp`."""
    base = f"{SIGNATURE_VERSION}:{timestamp}:".encode() + body
    return f"{SIGNATURE_VERSION}=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def signed_headers(secret: str, body: bytes, *, now: float | None = None) -> dict[str, str]:
    timestamp = str(int(time.time() if now is None else now))
    return {TIMESTAMP_HEADER: timestamp, SIGNATURE_HEADER: sign(secret, timestamp, body)}


def verify(*, secret: str, headers: Mapping[str, str], body: bytes, now: float | None = None) -> None:
    """Raise WebhookRejected(401) unless the request carries a fresh, valid Slack signature."""
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
    if abs(current - sent_at) > REPLAY_WINDOW_SECONDS:
        raise WebhookRejected(
            401, "timestamp_expired", f"Timestamp is outside the {REPLAY_WINDOW_SECONDS} s window."
        )
    expected = sign(secret, timestamp, body)
    if not secret or not hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace")):
        raise WebhookRejected(401, "signature_invalid", "Signature does not match.")


def url_verification_challenge(payload: Any) -> str | None:
    """The challenge of a (verified) url_verification request, else None."""
    if isinstance(payload, dict) and payload.get("type") == "url_verification":
        challenge = payload.get("challenge")
        if not isinstance(challenge, str) or not challenge:
            raise WebhookRejected(400, "invalid_payload", "url_verification needs a challenge.")
        return challenge
    return None


@dataclass(frozen=True)
class Destination:
    """Where a reply goes, decoded from the contact's source id."""

    channel: str
    thread_ts: str = ""


def source_id_for(channel: str, user: str, thread_ts: str = "") -> str:
    return f"{channel}:{user}:{thread_ts}" if thread_ts else f"{channel}:{user}"


def destination(source_id: str) -> Destination:
    channel, _, rest = source_id.partition(":")
    _, _, thread_ts = rest.partition(":")
    return Destination(channel=channel, thread_ts=thread_ts)


def _attachments(event: dict[str, Any]) -> list[dict[str, Any]]:
    attachments = []
    for item in map(dict_or_empty, list_or_empty(event.get("files"))):
        link = item.get("permalink") or item.get("url_private")
        if not isinstance(item.get("id"), str):
            continue
        attachment: dict[str, Any] = {"type": "file", "file_id": item["id"]}
        if isinstance(link, str) and link:
            attachment["url"] = link
        for source, target in (("name", "file_name"), ("mimetype", "content_type"), ("size", "file_size")):
            if item.get(source) is not None:
                attachment[target] = item[source]
        attachments.append(attachment)
    return attachments


def parse(payload: Any, *, bot_user_id: str = "") -> list[InboundMessage]:
    """Zero or one customer message from an event_callback envelope."""
    if not isinstance(payload, dict):
        raise WebhookRejected(400, "invalid_payload", "An event must be a JSON object.")
    if payload.get("type") != "event_callback":
        return []  # app_rate_limited and other envelope types
    event_id, event = payload.get("event_id"), payload.get("event")
    if not isinstance(event_id, str) or not event_id or not isinstance(event, dict):
        raise WebhookRejected(400, "invalid_payload", "event_callback needs event_id and event.")
    subtype = event.get("subtype")
    # A list or object as subtype is not a hashable set member (it raised TypeError, a 500); it is no customer
    # message either.
    if (
        event.get("type") != "message"
        or not isinstance(subtype, str | None)
        or subtype not in _CUSTOMER_SUBTYPES
    ):
        return []
    user, channel = event.get("user"), event.get("channel")
    if event.get("bot_id") or not isinstance(user, str) or not user or (bot_user_id and user == bot_user_id):
        return []  # bots, our own echoes: never answered by the AI (two bots would answer each other forever)
    if not isinstance(channel, str) or not channel:
        raise WebhookRejected(400, "invalid_payload", "A message event needs a channel.")
    text = event.get("text")
    if not isinstance(text, str):
        text = ""
    attachments = _attachments(event)
    if not text.strip() and attachments:
        names = ", ".join(str(a.get("file_name") or a["file_id"]) for a in attachments)
        text = f"[file: {names}]"
    if not text.strip():
        return []
    thread_ts = event.get("thread_ts")
    if not isinstance(thread_ts, str):
        thread_ts = ""
    return [
        InboundMessage(
            provider_message_id=event_id[:255],
            # Events carry the user id only; a name would cost a users.info call per contact.
            contact=InboundContact(source_id=source_id_for(channel, user, thread_ts), name=user[:200]),
            text=text,
            attachments=attachments,
        )
    ]


def interaction_body(body: bytes, *, content_type: str) -> bytes | None:
    """The JSON of an interactivity request (form-encoded `payload=<json>`), else None (an Events API request).
    Called only after `verify`: the signature covers the form body exactly as sent."""
    if content_type != "application/x-www-form-urlencoded":
        return None
    try:
        fields = parse_qs(body.decode("utf-8"), strict_parsing=True)
    except (UnicodeDecodeError, ValueError) as exc:
        raise WebhookRejected(400, "invalid_payload", "Interactivity body is not form-encoded.") from exc
    payloads = fields.get("payload")
    if not payloads or len(payloads) != 1:
        raise WebhookRejected(400, "invalid_payload", "Interactivity body needs one payload field.")
    return payloads[0].encode()


def parse_interaction(payload: Any) -> list[InboundMessage]:
    """A tap on one of our quick-reply buttons (`block_actions`) as an ordinary message from that user in that
    channel (and thread), carrying the button's full question. Other interactions: none.
    Dedup key: `slack-action:<user>:<action_ts>` (one per tap)."""
    if not isinstance(payload, dict):
        raise WebhookRejected(400, "invalid_payload", "An interaction must be a JSON object.")
    if payload.get("type") != "block_actions":
        return []  # shortcuts, view submissions ...: not messages
    action = next(
        (
            a
            for a in map(dict_or_empty, list_or_empty(payload.get("actions")))
            if a.get("type") == "button"
            and isinstance(a.get("action_id"), str)
            and a["action_id"].startswith((QUICK_REPLY_ACTION_PREFIX, RATING_ACTION_PREFIX))
        ),
        None,
    )
    if action is None:
        return []
    container = dict_or_empty(payload.get("container"))
    user = _text(dict_or_empty(payload.get("user")).get("id"))
    channel = _text(dict_or_empty(payload.get("channel")).get("id")) or _text(container.get("channel_id"))
    action_ts = _text(action.get("action_ts"))
    if not (user and channel and action_ts):
        raise WebhookRejected(
            400, "invalid_payload", "block_actions needs user.id, channel.id and action_ts."
        )
    text = _text(action.get("value"))
    if action["action_id"].startswith(RATING_ACTION_PREFIX) and text not in rating.RATING_CHOICES:
        return []  # a rating button always carries its digit; anything else is not ours
    if not text.strip():
        return []
    # The buttons sit on our reply; in a thread, that reply (and so the tap) belongs to the customer's thread.
    message = dict_or_empty(payload.get("message"))
    thread_ts = _text(message.get("thread_ts")) or _text(container.get("thread_ts"))
    return [
        InboundMessage(
            provider_message_id=f"slack-action:{user}:{action_ts}"[:255],
            contact=InboundContact(source_id=source_id_for(channel, user, thread_ts), name=user[:200]),
            text=text,
        )
    ]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
