"""WhatsApp Cloud API (Meta) channel.

Inbound: `GET /webhooks/whatsapp/<webhook_token>/` is Meta's verification handshake (`hub.mode=subscribe`,
`hub.verify_token`, `hub.challenge`: we answer the challenge only when the verify token matches
`provider_config["verify_token"]`). `POST` carries notifications signed with
`X-Hub-Signature-256: sha256=<hex HMAC-SHA256(app secret, raw body)>`; the app secret is `Inbox.secret`.
No timestamp, so no replay window: dedup by message id is what makes a replay harmless.

Parsed: `entry[].changes[]` with `field == "messages"`, each `value.messages[]` of type `text`, `image`, `document`,
`audio`, `video`, `sticker` (media: text = caption, or a placeholder such as `[image]`; the attachment keeps the media
id, which the Graph API turns into a download URL), `location`, `button` and `interactive` replies. Ignored with 200:
`statuses[]` (sent/delivered/read receipts; a `failed` status marks our outgoing message failed, see
`failed_statuses`), reactions, `system`/`unsupported`/`request_welcome` messages, other fields (account updates,
templates), and changes for another phone number of the same Meta app.
Dedup key: `messages[].id` (the wamid); an inbox is one phone number.
Contact source id: the sender's `wa_id` (`messages[].from`), with the profile name from `contacts[]`.

Outbound: `POST {api_base_url}/{api_version}/{phone_number_id}/messages` with
`{messaging_product: "whatsapp", to, type: "text", text: {body}}` and `Authorization: Bearer <access_token>`.
Length: a text body is limited to 4096 characters, so a longer reply is SPLIT into several messages sent in order.
Quick replies (follow-up questions): the last part goes as `type: "interactive"`, `interactive.type: "button"` with
at most 3 reply buttons (title <= 20 characters, shortened when longer; id `suggestion:<full question>` <= 256;
body <= 1024 characters). A part longer than that body goes as text, then the buttons under a short body. A tap
arrives as an `interactive.button_reply` (or `button`) message and is parsed into the full question's text.
A rating request (helpdesk.channels.rating) has five choices, more than 3 reply buttons hold, so it goes as an
interactive LIST: the question as body (<= 1024), a list button "⭐ 1-5" (<= 20), one section of five rows
titled ⭐ .. ⭐⭐⭐⭐⭐ (<= 24) with ids `csat:1`..`csat:5` (<= 200). The choice arrives as an
`interactive.list_reply` message and is parsed into the digit. A longer question goes as text first.

Files: `fetch_media` asks `GET /{api_version}/{media-id}` (bearer) for the media's URL, type and size; the URL
needs the bearer too and expires after a few minutes, so it is never stored.
No command menu and no tap to acknowledge (`set_commands` is not supported, `answer_callback` answers False).

`provider_config` keys: `phone_number_id` (required to send), `verify_token` (the handshake), `api_version`
(default v21.0), `api_base_url` (default https://graph.facebook.com; tests point it at 127.0.0.1).

Split by seam: `webhook` (signature, handshake, notifications in), `interactive` (buttons and the rating list),
`cloud_api` (sending, Meta's errors, media), `channel` (`WhatsAppChannel`). Every name stays importable from here.
"""

from __future__ import annotations

from .channel import (
    WhatsAppChannel,
)
from .cloud_api import (
    DEFAULT_API_BASE_URL,
    DEFAULT_API_VERSION,
    KNOWN_ERRORS,
    REENGAGEMENT_ERROR_CODE,
    TEXT_LIMIT,
    TRANSIENT_ERROR_CODES,
    classify,
    fetch_media,
    fit_text,
    known_error,
    logger,
    number_url,
    post_message,
    send,
)
from .interactive import (
    BUTTON_ID_LIMIT,
    BUTTON_TITLE_LIMIT,
    INTERACTIVE_BODY_LIMIT,
    MAX_BUTTONS,
    QUICK_REPLY_ID_PREFIX,
    QUICK_REPLY_SHORT_BODY,
    RATING_LIST_BUTTON,
    rating_list,
    reply_buttons,
)
from .webhook import (
    SIGNATURE_HEADER,
    SIGNATURE_PREFIX,
    failed_statuses,
    handshake,
    parse,
    sign,
    verify,
)

__all__ = [
    "BUTTON_ID_LIMIT",
    "BUTTON_TITLE_LIMIT",
    "DEFAULT_API_BASE_URL",
    "DEFAULT_API_VERSION",
    "INTERACTIVE_BODY_LIMIT",
    "KNOWN_ERRORS",
    "MAX_BUTTONS",
    "QUICK_REPLY_ID_PREFIX",
    "QUICK_REPLY_SHORT_BODY",
    "RATING_LIST_BUTTON",
    "REENGAGEMENT_ERROR_CODE",
    "SIGNATURE_HEADER",
    "SIGNATURE_PREFIX",
    "TEXT_LIMIT",
    "TRANSIENT_ERROR_CODES",
    "WhatsAppChannel",
    "classify",
    "failed_statuses",
    "fetch_media",
    "fit_text",
    "handshake",
    "known_error",
    "logger",
    "number_url",
    "parse",
    "post_message",
    "rating_list",
    "reply_buttons",
    "send",
    "sign",
    "verify",
]
