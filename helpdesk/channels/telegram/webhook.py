"""Telegram inbound: the webhook's secret token header, and an Update as the customer's message (a rating
button's tap included)."""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from typing import Any

from .. import rating
from ..base import InboundContact, InboundMessage, WebhookRejected
from ..provider_http import dict_or_empty

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"

# Message keys that carry a file, in the order we look for them; photo is a list of sizes (the last is largest).
_MEDIA_KEYS = ("photo", "document", "video", "audio", "voice")


def verify(*, secret: str, headers: Mapping[str, str]) -> None:
    """Raise WebhookRejected(401) unless the secret token header equals the inbox secret (constant time)."""
    received = headers.get(SECRET_HEADER, "")
    if not received:
        raise WebhookRejected(401, "signature_missing", f"{SECRET_HEADER} is required.")
    if not secret or not hmac.compare_digest(secret.encode(), received.encode("utf-8", "replace")):
        raise WebhookRejected(401, "signature_invalid", "Secret token does not match.")


def _contact(message: dict[str, Any], chat_id: int) -> InboundContact:
    sender = dict_or_empty(message.get("from")) or dict_or_empty(message.get("chat"))
    name = " ".join(str(sender.get(k, "")) for k in ("first_name", "last_name") if sender.get(k)).strip()
    if not name and sender.get("username"):
        name = f"@{sender['username']}"
    return InboundContact(source_id=str(chat_id), name=name[:200])


def _media(message: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    for key in _MEDIA_KEYS:
        value = message.get(key)
        if key == "photo" and isinstance(value, list) and value:
            value = value[-1]
        if isinstance(value, dict) and isinstance(value.get("file_id"), str):
            return key, value
    return None


def _attachment(kind: str, media: dict[str, Any], caption: str) -> dict[str, Any]:
    # No "url": a download link needs getFile, and its URL embeds the bot token, which must never be stored.
    # The file_id is enough for people (and a later download) to find the file through the Bot API.
    attachment: dict[str, Any] = {"type": kind, "file_id": media["file_id"]}
    for source, target in (
        ("file_unique_id", "file_unique_id"),
        ("file_name", "file_name"),
        ("mime_type", "content_type"),
        ("file_size", "file_size"),
    ):
        if media.get(source) is not None:
            attachment[target] = media[source]
    if caption:
        attachment["caption"] = caption
    return attachment


def parse(payload: Any) -> list[InboundMessage]:
    """Turn one Update into zero or one customer message (zero: an update that is not a new customer message)."""
    if not isinstance(payload, dict):
        raise WebhookRejected(400, "invalid_payload", "An Update must be a JSON object.")
    update_id = payload.get("update_id")
    if not isinstance(update_id, int) or isinstance(update_id, bool):
        raise WebhookRejected(400, "invalid_payload", "An Update needs an integer update_id.")
    message = payload.get("message")
    if message is None:
        # edited_message, other callback_query, my_chat_member, channel_post ...: answered 200, never stored.
        return _rating_tap(payload.get("callback_query"))
    if not isinstance(message, dict):
        raise WebhookRejected(400, "invalid_payload", "message must be an object.")
    chat_id = dict_or_empty(message.get("chat")).get("id")
    if not isinstance(chat_id, int) or isinstance(chat_id, bool):
        raise WebhookRejected(400, "invalid_payload", "message.chat.id must be an integer.")
    if dict_or_empty(message.get("from")).get("is_bot") is True:
        return []  # another bot (or our own echo in a group): never answered by the AI

    text = message.get("text")
    caption = message.get("caption")
    if not isinstance(caption, str):
        caption = ""
    attachments: list[dict[str, Any]] = []
    media = _media(message)
    if media is not None:
        kind, item = media
        attachments.append(_attachment(kind, item, caption))
        if not isinstance(text, str):
            name = item.get("file_name")
            text = caption or (f"[{kind}: {name}]" if isinstance(name, str) and name else f"[{kind}]")
    if not isinstance(text, str) or not text.strip():
        return []  # service messages (joins, pins) and content we do not handle
    return [
        InboundMessage(
            provider_message_id=f"tg-update:{update_id}",
            contact=_contact(message, chat_id),
            text=text,
            attachments=attachments,
        )
    ]


CALLBACK_ID_PREFIX = "tg-callback:"


def _rating_tap(callback_query: Any) -> list[InboundMessage]:
    """A tap on one of our rating buttons, as the digit from that chat; any other callback query: none."""
    query = dict_or_empty(callback_query)
    choice = rating.choice_from_button(query.get("data"))
    query_id = query.get("id")
    chat_id = dict_or_empty(dict_or_empty(query.get("message")).get("chat")).get("id")
    if not choice or not isinstance(query_id, str) or not query_id:
        return []
    if not isinstance(chat_id, int) or isinstance(chat_id, bool):
        raise WebhookRejected(400, "invalid_payload", "callback_query.message.chat.id must be an integer.")
    sender = dict_or_empty(query.get("from"))
    return [
        InboundMessage(
            provider_message_id=f"{CALLBACK_ID_PREFIX}{query_id}",
            contact=_contact({"from": sender}, chat_id),
            text=choice,
            callback_id=query_id,
        )
    ]
