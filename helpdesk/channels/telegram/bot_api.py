"""Telegram Bot API calls: sendMessage (with a reply or rating keyboard), the command menu, acknowledging a
button tap, getFile for a customer's file, and Telegram's answers classified. Importing it keeps bot tokens out
of httpx's log lines."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx

from .. import rating
from ..base import DeliveryResult
from ..media import Download, Failed, Refused, provider_json, reported_size
from ..provider_http import (
    ProviderAnswer,
    SendResult,
    dict_or_empty,
    post_json,
    retry_after_seconds,
    split_text,
    utf16_length,
)

if TYPE_CHECKING:
    from helpdesk.models import Inbox

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
