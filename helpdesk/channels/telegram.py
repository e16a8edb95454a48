"""Telegram Bot API channel.

Inbound: `POST /webhooks/telegram/<webhook_token>/`, registered with
`setWebhook(url=..., secret_token=<inbox.secret>)`; Telegram echoes the secret in the
`X-Telegram-Bot-Api-Secret-Token` header of every update (the only authentication Telegram offers: no body
signature, no timestamp). The body is one `Update`.

Parsed: `message` updates with `text`, or with a `photo`/`document`/`video`/`audio`/`voice` (text = the caption,
or a short placeholder such as `[photo]`; the attachment keeps Telegram's `file_id`), and a `callback_query` from
one of our rating buttons (callback data `csat:<1-5>`: the text is the digit). Ignored with 200:
`edited_message`, channel posts, other `callback_query` data, `my_chat_member`/`chat_member`, inline queries,
messages from bots, and service messages (joins, pins) or content we do not handle (stickers, locations, polls).
Dedup key: `tg-update:<update_id>` (update ids are unique per bot, and an inbox is one bot); a rating tap's is
`tg-callback:<callback_query.id>` (the id `answer_callback_query` needs to stop the button's spinner).
Contact source id: the chat id (a private chat's id is the user's id; a group's is negative).

Outbound: `POST {api_base_url}/bot<access_token>/sendMessage` with `{chat_id, text}`. A message with quick replies
(follow-up questions) adds `reply_markup`: a ReplyKeyboardMarkup, one button per row, `one_time_keyboard` and
`resize_keyboard`; a tap sends the button's text as an ordinary message (parsed like any other).
A rating request (helpdesk.channels.rating) instead carries an InlineKeyboardMarkup: one button per row, ⭐ to
⭐⭐⭐⭐⭐, callback data `csat:1`..`csat:5`; a tap arrives as a `callback_query` update.
Files a person attached (helpdesk.channels.outbound_files) follow the text, one message each, uploaded as
multipart/form-data: `sendPhoto` for a JPEG, PNG or WebP image up to 10 MB, `sendDocument` for anything else
(up to 50 MB, checked when the reply was written); each is one more part of the delivery.
Length: Telegram refuses texts over 4096 characters (counted in UTF-16 code units), so a longer reply is SPLIT into
several messages sent in order.
Command menu: `set_commands` replaces the bot's menu (`setMyCommands`, or `deleteMyCommands` for none) through
the same HTTP path as a send.
Files: `fetch_media` asks `getFile` where a file_id is; the file is then at `/file/bot<token>/<file_path>`
(helpdesk.services.attachments downloads and checks it).

`provider_config` keys: `api_base_url` (default https://api.telegram.org; tests point it at 127.0.0.1).
`Inbox.secret` is the webhook secret token (1-256 of A-Z a-z 0-9 _ -; the generated hex secret qualifies);
`Inbox.access_token` is the bot token.
"""

from __future__ import annotations

import hmac
import logging
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx

from . import rating
from .base import DeliveryResult, InboundContact, InboundMessage, WebhookRejected
from .media import Download, Failed, Refused, provider_json, reported_size
from .outbound_files import ANY_KIND, MB
from .protocol import Received, SentParts, WebhookRequest, webhook_json
from .provider_http import (
    FileSender,
    ProviderAnswer,
    SendResult,
    dict_or_empty,
    post_json,
    retry_after_seconds,
    send_in_parts,
    split_text,
    utf16_length,
)

if TYPE_CHECKING:
    from helpdesk.models import Inbox, Message

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
DEFAULT_API_BASE_URL = "https://api.telegram.org"
TEXT_LIMIT = 4096

# A Bot API URL carries the bot token in its path; httpx logs every request URL at INFO level.
_TOKEN_IN_URL = re.compile(r"/bot[^/\s]+/")


class RedactBotToken(logging.Filter):
    """Keeps bot tokens out of the logs: httpx's request log line would otherwise print them."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                _TOKEN_IN_URL.sub("/bot<redacted>/", str(arg)) if "/bot" in str(arg) else arg
                for arg in record.args
            )
        return True


logging.getLogger("httpx").addFilter(RedactBotToken())

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


def rating_keyboard() -> dict[str, Any]:
    """An InlineKeyboardMarkup for a rating request: one button per row (⭐ .. ⭐⭐⭐⭐⭐), each tap a
    callback query with data `csat:<n>` (at most 64 bytes, as Telegram allows)."""
    return {
        "inline_keyboard": [
            [{"text": rating.stars(choice), "callback_data": rating.button_id(choice)}]
            for choice in rating.RATING_CHOICES
        ]
    }


def answer_callback_query(
    inbox: Inbox, callback_query_id: str, *, text: str = "", timeout: float = 5.0
) -> bool:
    """Tell Telegram a button tap was handled (`answerCallbackQuery`), so the client stops its spinner and
    shows `text` briefly. Best effort: the rating is recorded whatever Telegram answers."""
    if not inbox.access_token:
        return False
    base = str(inbox.provider_config.get("api_base_url") or DEFAULT_API_BASE_URL).rstrip("/")
    payload: dict[str, Any] = {"callback_query_id": callback_query_id}
    if text:
        payload["text"] = text[:200]
    answer = post_json(
        f"{base}/bot{inbox.access_token}/answerCallbackQuery", payload=payload, headers={}, timeout=timeout
    )
    return not isinstance(answer, DeliveryResult) and classify(answer).result.ok


def fit_text(text: str) -> list[str]:
    """Telegram limit: 4096 UTF-16 code units per message, so a longer reply is split into several messages."""
    return split_text(text, TEXT_LIMIT, size=utf16_length)


def _chat_id(source_id: str) -> int | str:
    # The Bot API takes an integer chat id (or "@channelusername"); our source id is its decimal string.
    stripped = source_id.removeprefix("-")
    return int(source_id) if stripped.isdigit() else source_id


def reply_keyboard(quick_replies: Sequence[str]) -> dict[str, Any]:
    """A ReplyKeyboardMarkup with one button per row: a tap sends the button's text as an ordinary message, and
    the keyboard hides once used."""
    return {
        "keyboard": [[{"text": text}] for text in quick_replies],
        "one_time_keyboard": True,
        "resize_keyboard": True,
    }


def send(
    *, inbox: Inbox, source_id: str, text: str, timeout: float, quick_replies: Sequence[str] = ()
) -> SendResult:
    """Send one text part with sendMessage (with the quick replies as a reply keyboard) and classify Telegram's
    answer."""
    if not inbox.access_token:
        return SendResult(
            DeliveryResult(ok=False, permanent=True, error="The inbox has no Telegram bot token.")
        )
    base = str(inbox.provider_config.get("api_base_url") or DEFAULT_API_BASE_URL).rstrip("/")
    payload: dict[str, Any] = {"chat_id": _chat_id(source_id), "text": text}
    if rating.is_rating_request(quick_replies):
        payload["reply_markup"] = rating_keyboard()
    elif quick_replies:
        payload["reply_markup"] = reply_keyboard(quick_replies)
    answer = post_json(
        f"{base}/bot{inbox.access_token}/sendMessage",
        payload=payload,
        headers={},
        timeout=timeout,
    )
    if isinstance(answer, DeliveryResult):
        return SendResult(answer)
    return classify(answer)


COMMAND_RE = re.compile(r"^[a-z0-9_]{1,32}$")
MAX_COMMANDS = 100
MAX_COMMAND_DESCRIPTION = 256


def set_commands(
    inbox: Inbox, commands: Sequence[tuple[str, str]], *, timeout: float = 10.0
) -> DeliveryResult:
    """Replace the bot's command menu with `(command, description)` pairs (Bot API `setMyCommands`); an empty
    list clears it (`deleteMyCommands`). Telegram's limits are applied here: commands outside 1-32 characters of
    a-z, 0-9 and _ are left out, descriptions are cut to 256 characters (an empty one is the command itself),
    at most 100 commands are sent."""
    if not inbox.access_token:
        return DeliveryResult(ok=False, permanent=True, error="The inbox has no Telegram bot token.")
    menu = [
        {
            "command": command,
            "description": " ".join(description.split())[:MAX_COMMAND_DESCRIPTION] or command,
        }
        for command, description in commands
        if COMMAND_RE.match(command)
    ][:MAX_COMMANDS]
    base = str(inbox.provider_config.get("api_base_url") or DEFAULT_API_BASE_URL).rstrip("/")
    method, payload = ("setMyCommands", {"commands": menu}) if menu else ("deleteMyCommands", {})
    answer = post_json(
        f"{base}/bot{inbox.access_token}/{method}", payload=payload, headers={}, timeout=timeout
    )
    if isinstance(answer, DeliveryResult):
        return answer
    return classify(answer).result


# Telegram's error descriptions we recognise, and what a delivery error says for each. Only our wording reaches
# people: the description is text from whatever server `api_base_url` names.
KNOWN_ERRORS: tuple[tuple[str, str], ...] = (
    ("bot was blocked by the user", "bot was blocked by the user"),
    ("user is deactivated", "the user is deactivated"),
    ("bot was kicked", "bot was removed from the chat"),
    ("bot is not a member", "bot is not a member of the chat"),
    ("bot can't initiate conversation", "bot cannot start a conversation with this user"),
    ("bot can't send messages to bots", "bot cannot send messages to bots"),
    ("chat not found", "chat not found"),
    ("upgraded to a supergroup", "the group was upgraded to a supergroup"),
    ("not enough rights", "bot lacks the rights to send messages here"),
    ("have no rights", "bot lacks the rights to send messages here"),
    ("message is too long", "message is too long"),
    ("message text is empty", "message text is empty"),
    ("too many requests", "rate limited"),
    ("unauthorized", "Unauthorized (the bot token is not valid)"),
    ("not found", "Not Found (check the bot token and api_base_url)"),
)


def known_error(description: Any) -> str:
    """Our wording for a Telegram error description, or a generic one when we do not recognise it."""
    text = description.lower() if isinstance(description, str) else ""
    return next((ours for theirs, ours in KNOWN_ERRORS if theirs in text), "unrecognised error")


def classify(answer: ProviderAnswer) -> SendResult:
    """Telegram answers `{"ok": true, "result": Message}` or `{"ok": false, "error_code", "description",
    "parameters": {"retry_after": n}}`. 429 and 5xx are transient; any other error (401 bad token, 403 "bot was
    blocked by the user", 400 "chat not found") will not change on retry."""
    body = dict_or_empty(answer.body)
    status = answer.status_code
    if 200 <= status < 300 and body.get("ok") is True:
        message_id = dict_or_empty(body.get("result")).get("message_id")
        return SendResult(DeliveryResult(ok=True, status_code=status), str(message_id or ""))
    # Our wording for Telegram's description, never the text itself: it could echo the URL with the token, or
    # carry anything the server behind api_base_url wants people to read.
    error = f"Telegram HTTP {status}: {known_error(body.get('description'))}"
    if status == 429 or status >= 500 or 200 <= status < 300:
        # A 2xx without ok:true is a proxy or gateway in the way, not Telegram's verdict: try again later.
        parameters = dict_or_empty(body.get("parameters"))
        retry_after = retry_after_seconds(parameters.get("retry_after"))
        if retry_after is None:
            retry_after = retry_after_seconds(answer.headers.get("Retry-After"))
        return SendResult(DeliveryResult(ok=False, error=error, retry_after=retry_after, status_code=status))
    return SendResult(DeliveryResult(ok=False, permanent=True, error=error, status_code=status))


# A getFile answer's file_path ends up in the download URL's path; anything else could change the request.
_FILE_PATH = re.compile(r"[A-Za-z0-9_\-./]{1,512}")


def fetch_media(client: httpx.Client, inbox: Inbox, file_id: str) -> Download:
    """getFile turns the file_id into a file_path; the file is then at /file/bot<token>/<file_path>."""
    if not inbox.access_token:
        raise Failed("the inbox has no Telegram bot token", transient=False)
    base = str(inbox.provider_config.get("api_base_url") or DEFAULT_API_BASE_URL).rstrip("/")
    status, body = provider_json(
        client,
        f"{base}/bot{inbox.access_token}/getFile?file_id={quote(file_id, safe='')}",
        headers={},
        provider="Telegram",
    )
    result = body.get("result") if body.get("ok") is True else None
    file_path = result.get("file_path") if isinstance(result, dict) else None
    if not isinstance(file_path, str) or not _FILE_PATH.fullmatch(file_path) or ".." in file_path:
        # Bot API refuses files over 20 MB with ok:false ("file is too big"); a missing path is the same.
        description = str(body.get("description") or "").lower()
        if "too big" in description:
            raise Refused("Telegram does not hand out files this large to bots")
        raise Failed(f"Telegram HTTP {status}: no download path for the file", transient=False)
    return Download(
        url=f"{base}/file/bot{inbox.access_token}/{file_path}",
        headers={},
        declared_size=reported_size(result.get("file_size")) if isinstance(result, dict) else 0,
    )


class TelegramChannel:
    """The Telegram Bot API as a `Channel` (helpdesk.channels.protocol): the only provider here with a
    command menu and with button taps to acknowledge."""

    channel_type = "telegram"
    text_limit: int | None = TEXT_LIMIT
    supports_commands = True
    fetches_media = True
    # Bot API: sendDocument takes up to 50 MB (sendPhoto 10 MB: a larger image goes as a document).
    file_limits: Mapping[str, int] = {ANY_KIND: 50 * MB}
    files_total_limit: int | None = None
    request_limit: int | None = None

    def __init__(self, *, send_file: FileSender | None = None) -> None:
        # The files of a reply are sent by helpdesk.channels.telegram_files, which builds on this module; the
        # registry hands it in (an import here would close a loop). Without it a reply's files are not sent.
        self.send_file = send_file

    def verify(self, inbox: Inbox, request: WebhookRequest) -> None:
        verify(secret=inbox.secret, headers=request.headers)

    def parse(self, inbox: Inbox, request: WebhookRequest) -> Received:
        return Received(messages=parse(webhook_json(request.body)))

    def send(self, message: Message, *, timeout: float, parts: SentParts) -> DeliveryResult:
        return send_in_parts(
            message, parts=parts, timeout=timeout, fit_text=fit_text, send_part=send, send_file=self.send_file
        )

    def fetch_media(self, client: httpx.Client, inbox: Inbox, provider_ref: str) -> Download:
        return fetch_media(client, inbox, provider_ref)

    def set_commands(
        self, inbox: Inbox, commands: Sequence[tuple[str, str]], *, timeout: float = 10.0
    ) -> DeliveryResult:
        return set_commands(inbox, commands, timeout=timeout)

    def answer_callback(
        self, inbox: Inbox, callback_id: str, *, text: str = "", timeout: float = 5.0
    ) -> bool:
        return answer_callback_query(inbox, callback_id, text=text, timeout=timeout)
