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

Split by seam: `webhook` (the secret token, Updates in), `bot_api` (sending, the command menu, tap
acknowledgements, files, Telegram's errors), `channel` (`TelegramChannel`). Every name stays importable from here.
"""

from __future__ import annotations

from ..provider_http import utf16_length  # importable from here before the split; tests measure with it
from .bot_api import (
    COMMAND_RE,
    DEFAULT_API_BASE_URL,
    KNOWN_ERRORS,
    MAX_COMMAND_DESCRIPTION,
    MAX_COMMANDS,
    TEXT_LIMIT,
    RedactBotToken,
    answer_callback_query,
    classify,
    fetch_media,
    fit_text,
    known_error,
    rating_keyboard,
    reply_keyboard,
    send,
    set_commands,
)
from .channel import (
    TelegramChannel,
)
from .webhook import (
    CALLBACK_ID_PREFIX,
    SECRET_HEADER,
    parse,
    verify,
)

__all__ = [
    "CALLBACK_ID_PREFIX",
    "COMMAND_RE",
    "DEFAULT_API_BASE_URL",
    "KNOWN_ERRORS",
    "MAX_COMMANDS",
    "MAX_COMMAND_DESCRIPTION",
    "SECRET_HEADER",
    "TEXT_LIMIT",
    "RedactBotToken",
    "TelegramChannel",
    "answer_callback_query",
    "classify",
    "fetch_media",
    "fit_text",
    "known_error",
    "parse",
    "rating_keyboard",
    "reply_keyboard",
    "send",
    "set_commands",
    "utf16_length",
    "verify",
]
