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
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote

import httpx

from . import rating
from .base import DeliveryResult, InboundContact, InboundMessage, WebhookRejected
from .media import Download, Failed, provider_json, reported_size
from .outbound_files import ANY_KIND, MB
from .protocol import (
    Received,
    SentParts,
    WebhookAnswer,
    WebhookRequest,
    not_supported,
    webhook_json,
)
from .provider_http import (
    FileSender,
    ProviderAnswer,
    SendResult,
    dict_or_empty,
    list_or_empty,
    post_json,
    retry_after_seconds,
    send_in_parts,
    shorten_text,
    split_text,
)

if TYPE_CHECKING:
    from helpdesk.models import Inbox, Message

TIMESTAMP_HEADER = "X-Slack-Request-Timestamp"
SIGNATURE_HEADER = "X-Slack-Signature"
SIGNATURE_VERSION = "v0"
REPLAY_WINDOW_SECONDS = 300  # Slack's own recommendation; a request older than this is refused as a replay
DEFAULT_API_BASE_URL = "https://slack.com"
TEXT_LIMIT = 40_000
# Block Kit limits for a reply with quick-reply buttons.
SECTION_TEXT_LIMIT = 3000
BUTTON_TEXT_LIMIT = 75
BUTTON_VALUE_LIMIT = 2000
MAX_ACTION_ELEMENTS = 25
QUICK_REPLY_BLOCK_ID = "quick_replies"
QUICK_REPLY_ACTION_PREFIX = "quick_reply_"
"""`action_id` of our quick-reply buttons (`quick_reply_0`, `quick_reply_1`...): only their taps are messages."""
RATING_BLOCK_ID = "csat"
RATING_ACTION_PREFIX = "csat_"
"""`action_id` of our rating buttons (`csat_1`..`csat_5`); their taps are messages too (the digit)."""

# Message subtypes that are still a person writing to us; every other subtype is an edit, a bot or a notice.
_CUSTOMER_SUBTYPES = frozenset({None, "file_share", "thread_broadcast"})
# chat.postMessage errors worth retrying; every other `ok: false` error (invalid_auth, channel_not_found,
# not_in_channel, is_archived, account_inactive, token_revoked, msg_too_long ...) fails the same way each time.
TRANSIENT_ERRORS = frozenset(
    {"ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"}
)


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


def fit_text(text: str) -> list[str]:
    """Slack limit: 40,000 characters, so a longer reply is shortened with an ellipsis (never split)."""
    return [shorten_text(text, TEXT_LIMIT)]


def quick_reply_blocks(text: str, quick_replies: Sequence[str]) -> list[dict[str, Any]]:
    """The reply as section blocks (each at most 3000 characters) followed by an actions block with one button per
    quick reply: text at most 75 characters (shortened when longer), the full question in `value` (at most 2000),
    a unique `action_id` per button."""
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": part}}
        for part in split_text(text, SECTION_TEXT_LIMIT)
        if part.strip()
    ]
    buttons = [
        {
            "type": "button",
            "text": {"type": "plain_text", "text": shorten_text(question, BUTTON_TEXT_LIMIT), "emoji": True},
            "value": question[:BUTTON_VALUE_LIMIT],
            "action_id": f"{QUICK_REPLY_ACTION_PREFIX}{index}",
        }
        for index, question in enumerate(quick_replies[:MAX_ACTION_ELEMENTS])
    ]
    blocks.append({"type": "actions", "block_id": QUICK_REPLY_BLOCK_ID, "elements": buttons})
    return blocks


def rating_blocks(text: str) -> list[dict[str, Any]]:
    """A rating request: the question as section blocks and one actions block of five buttons
    (⭐ .. ⭐⭐⭐⭐⭐, `action_id` `csat_<n>`, `value` the digit)."""
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": part}}
        for part in split_text(text, SECTION_TEXT_LIMIT)
        if part.strip()
    ]
    buttons = [
        {
            "type": "button",
            "text": {"type": "plain_text", "text": rating.stars(choice), "emoji": True},
            "value": choice,
            "action_id": f"{RATING_ACTION_PREFIX}{choice}",
        }
        for choice in rating.RATING_CHOICES
    ]
    blocks.append({"type": "actions", "block_id": RATING_BLOCK_ID, "elements": buttons})
    return blocks


def send(
    *, inbox: Inbox, source_id: str, text: str, timeout: float, quick_replies: Sequence[str] = ()
) -> SendResult:
    """Post one message with chat.postMessage (in the customer's thread when they wrote in one), with the quick
    replies as buttons under the text."""
    if not inbox.access_token:
        return SendResult(DeliveryResult(ok=False, permanent=True, error="The inbox has no Slack bot token."))
    target = destination(source_id)
    payload: dict[str, Any] = {"channel": target.channel, "text": text}
    if rating.is_rating_request(quick_replies):
        payload["blocks"] = rating_blocks(text)
    elif quick_replies:
        # With blocks, Slack shows the blocks and uses `text` only for notifications.
        payload["blocks"] = quick_reply_blocks(text, quick_replies)
    if target.thread_ts:
        payload["thread_ts"] = target.thread_ts
    base = str(inbox.provider_config.get("api_base_url") or DEFAULT_API_BASE_URL).rstrip("/")
    answer = post_json(
        f"{base}/api/chat.postMessage",
        payload=payload,
        headers={"Authorization": f"Bearer {inbox.access_token}"},
        timeout=timeout,
    )
    if isinstance(answer, DeliveryResult):
        return SendResult(answer)
    return classify(answer)


# chat.postMessage's documented error codes (and the Web API's common ones). A delivery error names a code
# only when it is one of these: the `error` field is text from whatever server `api_base_url` names.
KNOWN_ERRORS = TRANSIENT_ERRORS | frozenset(
    {
        "access_denied",
        "account_inactive",
        "as_user_not_supported",
        "cannot_reply_to_message",
        "channel_not_found",
        "deprecated_endpoint",
        "duplicate_channel_not_found",
        "ekm_access_denied",
        "enterprise_is_restricted",
        "invalid_arguments",
        "invalid_auth",
        "invalid_blocks",
        "invalid_charset",
        "invalid_form_data",
        "is_archived",
        "message_limit_exceeded",
        "messages_tab_disabled",
        "method_deprecated",
        "missing_scope",
        "msg_too_long",
        "no_permission",
        "no_text",
        "not_allowed_token_type",
        "not_authed",
        "not_in_channel",
        "org_login_required",
        "rate_limited",
        "restricted_action",
        "restricted_action_read_only_channel",
        "restricted_action_thread_only_channel",
        "team_access_not_granted",
        "token_expired",
        "token_revoked",
        "too_many_attachments",
        "two_factor_setup_required",
    }
)


def known_error(code: Any) -> str:
    if not code:
        return "no error code"
    return code if isinstance(code, str) and code in KNOWN_ERRORS else "unrecognised error code"


def classify(answer: ProviderAnswer) -> SendResult:
    """HTTP 429 (with Retry-After) and 5xx are transient; HTTP 200 `ok: false` is classified by its error."""
    body = dict_or_empty(answer.body)
    status = answer.status_code
    retry_after = retry_after_seconds(answer.headers.get("Retry-After"))
    if status == 429 or status >= 500:
        error = f"Slack HTTP {status}: {known_error(body.get('error'))}"
        return SendResult(DeliveryResult(ok=False, error=error, retry_after=retry_after, status_code=status))
    if 200 <= status < 300 and body.get("ok") is True:
        return SendResult(DeliveryResult(ok=True, status_code=status), str(body.get("ts") or ""))
    code = str(body.get("error") or "")
    error = f"Slack HTTP {status}: {known_error(code)}"
    if code in TRANSIENT_ERRORS or (200 <= status < 300 and not code):
        # No JSON verdict at all on a 2xx: something in between answered, not Slack. Try again later.
        return SendResult(DeliveryResult(ok=False, error=error, retry_after=retry_after, status_code=status))
    return SendResult(DeliveryResult(ok=False, permanent=True, error=error, status_code=status))


def fetch_media(client: httpx.Client, inbox: Inbox, file_id: str) -> Download:
    """files.info (bot token) answers the file's url_private_download; that URL needs the bot token too."""
    if not inbox.access_token:
        raise Failed("the inbox has no Slack bot token", transient=False)
    base = str(inbox.provider_config.get("api_base_url") or DEFAULT_API_BASE_URL).rstrip("/")
    auth = {"Authorization": f"Bearer {inbox.access_token}"}
    status, body = provider_json(
        client,
        f"{base}/api/files.info?file={quote(file_id, safe='')}",
        headers=auth,
        provider="Slack",
    )
    file = body.get("file") if status == 200 and body.get("ok") is True else None
    if not isinstance(file, dict):
        error = str(body.get("error") or "")
        raise Failed(
            f"Slack HTTP {status}: "
            + (error if error in ("file_not_found", "file_deleted", "missing_scope") else "error"),
            transient=error in ("ratelimited", "internal_error", "service_unavailable"),
        )
    url = file.get("url_private_download") or file.get("url_private")
    if not isinstance(url, str) or not url:
        raise Failed("Slack did not give a download URL for the file", transient=False)
    return Download(
        url=url,
        headers=auth,
        declared_type=str(file.get("mimetype") or ""),
        declared_size=reported_size(file.get("size")),
    )


class SlackChannel:
    """The Slack Events API as a `Channel` (helpdesk.channels.protocol). One URL takes events (a signed
    url_verification is answered with its challenge) and interactivity requests (taps on our buttons)."""

    channel_type = "slack"
    text_limit: int | None = SECTION_TEXT_LIMIT
    supports_commands = False
    fetches_media = True
    # files.getUploadURLExternal: up to 1 GB (we keep no file over outbound_files.STORE_LIMIT).
    file_limits: Mapping[str, int] = {ANY_KIND: 1000 * MB}
    files_total_limit: int | None = None
    request_limit: int | None = None

    def __init__(self, *, send_file: FileSender | None = None) -> None:
        # The files of a reply are sent by helpdesk.channels.slack_files, which builds on this module; the
        # registry hands it in (an import here would close a loop). Without it a reply's files are not sent.
        self.send_file = send_file

    def verify(self, inbox: Inbox, request: WebhookRequest) -> None:
        verify(secret=inbox.secret, headers=request.headers, body=request.body)

    def parse(self, inbox: Inbox, request: WebhookRequest) -> Received:
        interaction = interaction_body(request.body, content_type=request.content_type)
        if interaction is not None:
            # A tap on a quick-reply button (the Interactivity Request URL is this one), verified like an event.
            return Received(messages=parse_interaction(webhook_json(interaction)))
        payload = webhook_json(request.body)
        challenge = url_verification_challenge(payload)
        if challenge is not None:
            # Only reached with a valid signature: the challenge proves to Slack that this URL is ours.
            return Received(answer=WebhookAnswer({"challenge": challenge}))
        return Received(
            messages=parse(payload, bot_user_id=str(inbox.provider_config.get("bot_user_id") or ""))
        )

    def send(self, message: Message, *, timeout: float, parts: SentParts) -> DeliveryResult:
        return send_in_parts(
            message, parts=parts, timeout=timeout, fit_text=fit_text, send_part=send, send_file=self.send_file
        )

    def fetch_media(self, client: httpx.Client, inbox: Inbox, provider_ref: str) -> Download:
        return fetch_media(client, inbox, provider_ref)

    def set_commands(
        self, inbox: Inbox, commands: Sequence[tuple[str, str]], *, timeout: float = 10.0
    ) -> DeliveryResult:
        return not_supported("command menu")

    def answer_callback(
        self, inbox: Inbox, callback_id: str, *, text: str = "", timeout: float = 5.0
    ) -> bool:
        return False  # an interactivity request is acknowledged by answering it 200
