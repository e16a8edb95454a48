"""Slack Events API channel.

Inbound: `POST /webhooks/slack/<webhook_token>/` (the app's Event Subscriptions request URL). Every request, the
`url_verification` one included, is signed: `X-Slack-Signature: v0=<hex HMAC-SHA256(signing secret,
"v0:{X-Slack-Request-Timestamp}:{raw body}")>`, and the timestamp must be within 300 s of now (Slack's replay
window). The signing secret is `Inbox.secret`. `url_verification` is answered with its challenge only after that
check, so nobody can prove they own our URL with a forged request.

Parsed: `event_callback` envelopes whose event is a `message` from a person (plain, `file_share` and
`thread_broadcast`), text plus `files[]` as links (the file's permalink; opening it needs a Slack login).
Ignored with 200: other event types (`app_mention` too: Slack also sends the same message as a `message` event,
with another event_id, so handling both would store it twice), `message_changed`/`message_deleted`, `bot_message`
and any message with a `bot_id`, our own bot's user (`provider_config["bot_user_id"]`), joins/leaves/topic and other
subtypes, and `app_rate_limited` notices.
Dedup key: the envelope's `event_id` (Slack retries up to 3 times with the same id).
Contact source id: `<channel>:<user>`, plus `:<thread_ts>` when the customer wrote in a thread, so the reply goes
to the same thread (a thread is then its own contact row: the price of keeping it in the source id).

Quick replies (follow-up questions): the reply carries `blocks`: the text as section blocks and an actions block
with one button per question (text <= 75 characters, the full question in `value`, `action_id` `quick_reply_<n>`).
A tap arrives at the same URL (set it as the app's Interactivity Request URL too) as a form-encoded
`payload=<json>` of type `block_actions`, signed like events; it becomes an ordinary message from that user in that
channel (and thread) with the full question, dedup key `slack-action:<user>:<action_ts>`, answered 200 at once.
A rating request (helpdesk.channels.rating) carries the question as a section and an actions block
`block_id: "csat"` with five buttons (⭐ .. ⭐⭐⭐⭐⭐, `action_id` `csat_1`..`csat_5`, `value` the digit); a tap
arrives the same way and becomes a message with the digit. Other interactions are ignored with 200.

Outbound: `POST {api_base_url}/api/chat.postMessage` with `{channel, text, thread_ts?}` (plus `blocks` with quick
replies) and
`Authorization: Bearer <access_token>` (the bot token). Slack answers HTTP 200 with `{"ok": false, "error": ...}`
for most failures; those are classified by the error string.
Length: Slack truncates texts over 40,000 characters, so a longer reply is SHORTENED with an ellipsis (one long
message reads better in Slack than several).

Files: `fetch_media` asks `files.info` (bot token) for a file's `url_private_download`, which needs the bot
token too. No command menu and no tap to acknowledge (`set_commands` is not supported, `answer_callback` answers
False: an interactivity request is acknowledged by our 200).
What the AI is told a message holds (`text_limit`) is a section block's 3,000 characters, not the 40,000 of a
plain text: a reply with quick-reply buttons goes as section blocks.

`provider_config` keys: `bot_user_id` (our bot's user id, to ignore its echoes), `api_base_url` (default
https://slack.com; tests point it at 127.0.0.1).

Split by seam: `webhook` (signature, events and interactions in), `blocks` (Block Kit buttons), `web_api`
(chat.postMessage and files.info), `channel` (`SlackChannel`). Every name stays importable from here.
"""

from __future__ import annotations

from .blocks import (
    BUTTON_TEXT_LIMIT,
    BUTTON_VALUE_LIMIT,
    MAX_ACTION_ELEMENTS,
    QUICK_REPLY_ACTION_PREFIX,
    QUICK_REPLY_BLOCK_ID,
    RATING_ACTION_PREFIX,
    RATING_BLOCK_ID,
    SECTION_TEXT_LIMIT,
    quick_reply_blocks,
    rating_blocks,
)
from .channel import SlackChannel
from .web_api import (
    DEFAULT_API_BASE_URL,
    KNOWN_ERRORS,
    TEXT_LIMIT,
    TRANSIENT_ERRORS,
    classify,
    fetch_media,
    fit_text,
    known_error,
    send,
)
from .webhook import (
    REPLAY_WINDOW_SECONDS,
    SIGNATURE_HEADER,
    SIGNATURE_VERSION,
    TIMESTAMP_HEADER,
    Destination,
    destination,
    interaction_body,
    parse,
    parse_interaction,
    sign,
    signed_headers,
    source_id_for,
    url_verification_challenge,
    verify,
)

__all__ = [
    "BUTTON_TEXT_LIMIT",
    "BUTTON_VALUE_LIMIT",
    "DEFAULT_API_BASE_URL",
    "KNOWN_ERRORS",
    "MAX_ACTION_ELEMENTS",
    "QUICK_REPLY_ACTION_PREFIX",
    "QUICK_REPLY_BLOCK_ID",
    "RATING_ACTION_PREFIX",
    "RATING_BLOCK_ID",
    "REPLAY_WINDOW_SECONDS",
    "SECTION_TEXT_LIMIT",
    "SIGNATURE_HEADER",
    "SIGNATURE_VERSION",
    "TEXT_LIMIT",
    "TIMESTAMP_HEADER",
    "TRANSIENT_ERRORS",
    "Destination",
    "SlackChannel",
    "classify",
    "destination",
    "fetch_media",
    "fit_text",
    "interaction_body",
    "known_error",
    "parse",
    "parse_interaction",
    "quick_reply_blocks",
    "rating_blocks",
    "send",
    "sign",
    "signed_headers",
    "source_id_for",
    "url_verification_challenge",
    "verify",
]
