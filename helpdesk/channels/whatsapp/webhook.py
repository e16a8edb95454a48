"""WhatsApp inbound: the request signature, Meta's subscription handshake, and the notifications' customer
messages and failed statuses."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator, Mapping
from typing import Any

from .. import rating
from ..base import FailedStatus, InboundContact, InboundMessage, WebhookRejected
from ..provider_http import dict_or_empty, list_or_empty
from .interactive import QUICK_REPLY_ID_PREFIX

SIGNATURE_HEADER = "X-Hub-Signature-256"
SIGNATURE_PREFIX = "sha256="

_MEDIA_TYPES = ("image", "document", "audio", "video", "sticker")


def sign(secret: str, body: bytes) -> str:
    """The X-Hub-Signature-256 value Meta sends for `body`."""
    return SIGNATURE_PREFIX + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify(*, secret: str, headers: Mapping[str, str], body: bytes) -> None:
    """Raise WebhookRejected(401) unless X-Hub-Signature-256 is the HMAC of the raw body with the app secret."""
    received = headers.get(SIGNATURE_HEADER, "")
    if not received:
        raise WebhookRejected(401, "signature_missing", f"{SIGNATURE_HEADER} is required.")
    if not secret or not hmac.compare_digest(
        sign(secret, body).encode(), received.encode("utf-8", "replace")
    ):
        raise WebhookRejected(401, "signature_invalid", "Signature does not match.")


def handshake(*, params: Mapping[str, str], verify_token: str) -> str:
    """Meta's subscription check: the challenge to echo, or WebhookRejected(403) when the token does not match."""
    if params.get("hub.mode") != "subscribe":
        raise WebhookRejected(400, "invalid_handshake", "hub.mode must be 'subscribe'.")
    received = params.get("hub.verify_token", "")
    if not verify_token or not hmac.compare_digest(
        verify_token.encode(), received.encode("utf-8", "replace")
    ):
        raise WebhookRejected(403, "verify_token_invalid", "hub.verify_token does not match.")
    challenge = params.get("hub.challenge", "")
    if not challenge:
        raise WebhookRejected(400, "invalid_handshake", "hub.challenge is required.")
    return challenge


def _values(payload: Any, phone_number_id: str) -> Iterator[dict[str, Any]]:
    """The `value` of every messages change addressed to our phone number."""
    if not isinstance(payload, dict):
        raise WebhookRejected(400, "invalid_payload", "A notification must be a JSON object.")
    if payload.get("object") != "whatsapp_business_account":
        return
    for entry in list_or_empty(payload.get("entry")):
        for change in list_or_empty(dict_or_empty(entry).get("changes")):
            change = dict_or_empty(change)
            if change.get("field") != "messages":
                continue
            value = dict_or_empty(change.get("value"))
            number = dict_or_empty(value.get("metadata")).get("phone_number_id")
            # One Meta app posts every phone number's traffic to the same URL; another number's is not ours.
            if phone_number_id and number is not None and str(number) != phone_number_id:
                continue
            yield value


def _quick_reply_text(button_id: Any) -> str:
    """The full question a quick-reply button's id carries; "" for any other id."""
    if isinstance(button_id, str) and button_id.startswith(QUICK_REPLY_ID_PREFIX):
        return button_id.removeprefix(QUICK_REPLY_ID_PREFIX).strip()
    return ""


def _content(message: dict[str, Any]) -> tuple[str, list[dict[str, Any]]] | None:
    kind = message.get("type")
    if kind == "text":
        return str(dict_or_empty(message.get("text")).get("body") or ""), []
    if kind in _MEDIA_TYPES:
        media = dict_or_empty(message.get(kind))
        if not isinstance(media.get("id"), str):
            return None
        caption = media.get("caption") if isinstance(media.get("caption"), str) else ""
        # No "url": the download URL comes from GET /{media-id} with the access token and expires in minutes.
        attachment: dict[str, Any] = {"type": kind, "media_id": media["id"]}
        for source, target in (
            ("mime_type", "content_type"),
            ("filename", "file_name"),
            ("sha256", "sha256"),
        ):
            if media.get(source):
                attachment[target] = media[source]
        if caption:
            attachment["caption"] = caption
        name = media.get("filename")
        text = caption or (f"[{kind}: {name}]" if isinstance(name, str) and name else f"[{kind}]")
        return text, [attachment]
    if kind == "location":
        place = dict_or_empty(message.get("location"))
        label = " ".join(str(place[k]) for k in ("name", "address") if place.get(k))
        return f"[location: {place.get('latitude')}, {place.get('longitude')}] {label}".strip(), []
    if kind == "button":
        button = dict_or_empty(message.get("button"))
        return _quick_reply_text(button.get("payload")) or str(button.get("text") or ""), []
    if kind == "interactive":
        interactive = dict_or_empty(message.get("interactive"))
        reply = dict_or_empty(interactive.get("button_reply") or interactive.get("list_reply"))
        # Our quick-reply buttons carry the whole question in their id; the title may be shortened. A rating
        # row's id carries its digit (its title is stars).
        text = rating.choice_from_button(reply.get("id")) or _quick_reply_text(reply.get("id"))
        return text or str(reply.get("title") or ""), []
    # reaction, system, unsupported, request_welcome, order ...: not a question for the helpdesk.
    return None


def parse(payload: Any, *, phone_number_id: str = "") -> list[InboundMessage]:
    """Every customer message in one notification (Meta may batch several); statuses are not messages."""
    parsed: list[InboundMessage] = []
    for value in _values(payload, phone_number_id):
        names = {
            str(contact.get("wa_id")): str(dict_or_empty(contact.get("profile")).get("name") or "")
            for contact in map(dict_or_empty, list_or_empty(value.get("contacts")))
        }
        for message in map(dict_or_empty, list_or_empty(value.get("messages"))):
            wamid, sender = message.get("id"), message.get("from")
            if not isinstance(wamid, str) or not wamid or not isinstance(sender, str) or not sender:
                raise WebhookRejected(400, "invalid_payload", "messages[] need string id and from.")
            content = _content(message)
            if content is None or not content[0].strip():
                continue
            text, attachments = content
            parsed.append(
                InboundMessage(
                    provider_message_id=wamid[:255],
                    contact=InboundContact(source_id=sender, name=names.get(sender, "")[:200]),
                    text=text,
                    attachments=attachments,
                )
            )
    return parsed


def failed_statuses(payload: Any, *, phone_number_id: str = "") -> list[FailedStatus]:
    """`statuses[]` entries with status "failed". Meta often reports 131047 (the 24-hour window) this way,
    after the send call itself returned 200 with a wamid."""
    failed: list[FailedStatus] = []
    for value in _values(payload, phone_number_id):
        for status in map(dict_or_empty, list_or_empty(value.get("statuses"))):
            if status.get("status") != "failed" or not isinstance(status.get("id"), str):
                continue
            errors = [dict_or_empty(e) for e in list_or_empty(status.get("errors"))] or [{}]
            error = "; ".join(f"WhatsApp {e.get('code', '?')}: {e.get('title') or 'failed'}" for e in errors)
            failed.append(FailedStatus(provider_message_id=status["id"], error=error))
    return failed
