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
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import httpx

from . import rating
from .base import DeliveryResult, FailedStatus, InboundContact, InboundMessage, WebhookRejected
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

logger = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Hub-Signature-256"
SIGNATURE_PREFIX = "sha256="
DEFAULT_API_BASE_URL = "https://graph.facebook.com"
DEFAULT_API_VERSION = "v21.0"
TEXT_LIMIT = 4096
# Interactive reply buttons (Meta's documented limits).
INTERACTIVE_BODY_LIMIT = 1024
MAX_BUTTONS = 3
BUTTON_TITLE_LIMIT = 20
BUTTON_ID_LIMIT = 256
QUICK_REPLY_ID_PREFIX = "suggestion:"
"""Marks a button id that carries a quick reply's full text; a tap on it comes back as that text."""
QUICK_REPLY_SHORT_BODY = "👇"
"""Body of the buttons' own message when the reply was too long to carry them: no words, so no language."""

_MEDIA_TYPES = ("image", "document", "audio", "video", "sticker")
# Graph API error codes that mean "try again later": rate limits and Meta's own temporary trouble.
# Everything else (190 expired token, 131047 outside the 24-hour window, 131026 undeliverable, 100 bad
# parameter, permission errors ...) will fail the same way on every retry.
TRANSIENT_ERROR_CODES = frozenset({1, 2, 4, 17, 341, 80007, 130429, 131000, 131016, 131048, 131056, 133004})
REENGAGEMENT_ERROR_CODE = 131047


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


def fit_text(text: str) -> list[str]:
    """WhatsApp limit: a text body holds 4096 characters, so a longer reply is split into several messages."""
    return split_text(text, TEXT_LIMIT)


def reply_buttons(body: str, quick_replies: Sequence[str]) -> dict[str, Any]:
    """An interactive "button" message: at most 3 reply buttons, each title unique and at most 20 characters
    (a longer question is shortened on the button), its id `suggestion:<the full question>` (at most 256
    characters) so the tap brings the whole question back; `body` must fit `INTERACTIVE_BODY_LIMIT`."""
    buttons: list[dict[str, Any]] = []
    titles: set[str] = set()
    for text in quick_replies:
        button_id = (QUICK_REPLY_ID_PREFIX + text.strip())[:BUTTON_ID_LIMIT]
        title = shorten_text(text.strip(), BUTTON_TITLE_LIMIT)
        # Meta refuses two buttons with the same title: two questions that start alike get numbered.
        number = 2
        while title in titles:
            suffix = f" {number}"
            title = shorten_text(text.strip(), BUTTON_TITLE_LIMIT - len(suffix)) + suffix
            number += 1
        titles.add(title)
        buttons.append({"type": "reply", "reply": {"id": button_id, "title": title}})
        if len(buttons) == MAX_BUTTONS:
            break
    return {"type": "button", "body": {"text": body}, "action": {"buttons": buttons}}


RATING_LIST_BUTTON = "⭐ 1-5"
"""The list's button label (at most 20 characters): no words, so no language."""


def rating_list(body: str) -> dict[str, Any]:
    """An interactive "list" message for a rating request: five rows (⭐ .. ⭐⭐⭐⭐⭐, ids `csat:1`..`csat:5`)
    in one untitled section (a title is needed only with several); `body` must fit `INTERACTIVE_BODY_LIMIT`."""
    return {
        "type": "list",
        "body": {"text": body},
        "action": {
            "button": RATING_LIST_BUTTON,
            "sections": [
                {
                    "rows": [
                        {"id": rating.button_id(choice), "title": rating.stars(choice)}
                        for choice in rating.RATING_CHOICES
                    ]
                }
            ],
        },
    }


def number_url(inbox: Inbox) -> str | SendResult:
    """`{api base}/{version}/{phone_number_id}` of the inbox's business number (its `/messages` and `/media`
    live under it), or the failed send saying what the inbox lacks."""
    config = inbox.provider_config
    phone_number_id = str(config.get("phone_number_id") or "")
    if not inbox.access_token or not phone_number_id:
        return SendResult(
            DeliveryResult(
                ok=False, permanent=True, error="The inbox needs a WhatsApp access token and phone_number_id."
            )
        )
    base = str(config.get("api_base_url") or DEFAULT_API_BASE_URL).rstrip("/")
    version = str(config.get("api_version") or DEFAULT_API_VERSION)
    return f"{base}/{version}/{phone_number_id}"


def post_message(
    inbox: Inbox, number: str, source_id: str, message: dict[str, Any], timeout: float
) -> SendResult:
    """Send one message object (`{"type": ..., ...}`) to the customer and classify Meta's answer."""
    answer = post_json(
        f"{number}/messages",
        payload={"messaging_product": "whatsapp", "recipient_type": "individual", "to": source_id, **message},
        headers={"Authorization": f"Bearer {inbox.access_token}"},
        timeout=timeout,
    )
    if isinstance(answer, DeliveryResult):
        return SendResult(answer)
    return classify(answer)


def send(
    *, inbox: Inbox, source_id: str, text: str, timeout: float, quick_replies: Sequence[str] = ()
) -> SendResult:
    """Send one text part through the Cloud API and classify Meta's answer. With quick replies the part goes as
    an interactive message with reply buttons; a part longer than an interactive body goes as text first, then
    the buttons follow under a short body (their failure alone does not fail the delivery: the reply arrived)."""
    number = number_url(inbox)
    if isinstance(number, SendResult):
        return number

    def post(message: dict[str, Any]) -> SendResult:
        return post_message(inbox, number, source_id, message, timeout)

    text_message = {"type": "text", "text": {"preview_url": False, "body": text}}
    if not quick_replies:
        return post(text_message)

    def interactive(body: str) -> dict[str, Any]:
        form = (
            rating_list(body)
            if rating.is_rating_request(quick_replies)
            else reply_buttons(body, quick_replies)
        )
        return {"type": "interactive", "interactive": form}

    if len(text) <= INTERACTIVE_BODY_LIMIT:
        return post(interactive(text))
    sent = post(text_message)
    if sent.result.ok:
        buttons = post(interactive(QUICK_REPLY_SHORT_BODY))
        if not buttons.result.ok:
            logger.warning("WhatsApp quick replies not sent: %s", buttons.result.error)
    return sent


# Graph API error codes we recognise, and what a delivery error says for each. Only the numeric code and our
# wording reach people: Meta's message and details are text from whatever server `api_base_url` names.
KNOWN_ERRORS: dict[int, str] = {
    REENGAGEMENT_ERROR_CODE: "outside the 24-hour customer service window (only a template message can reopen it)",
    1: "temporary Meta API error",
    2: "Meta service temporarily unavailable",
    4: "application rate limit reached",
    10: "permission denied",
    17: "user rate limit reached",
    100: "invalid parameter (check phone_number_id and the recipient)",
    190: "access token expired or not valid",
    200: "permission denied",
    341: "application limit reached",
    368: "temporarily blocked for policy violations",
    80007: "rate limit reached",
    130429: "throughput rate limit reached",
    131000: "temporary Meta error",
    131005: "access denied",
    131008: "a required parameter is missing",
    131009: "a parameter value is not valid",
    131016: "Meta service temporarily unavailable",
    131021: "recipient cannot be the sender",
    131026: "message undeliverable (the number may not be on WhatsApp)",
    131030: "recipient is not in the test number's allowed list",
    131031: "the business account is locked",
    131042: "a business payment issue blocks sending",
    131048: "spam rate limit reached",
    131051: "message type not supported",
    131056: "too many messages to this recipient",
    133004: "the phone number's server is temporarily unavailable",
    133010: "the phone number is not registered",
}


def known_error(code: Any) -> str:
    # Meta's codes have at most 7 digits; anything else is not Meta talking (and could be 4,000 digits long).
    if isinstance(code, bool) or not isinstance(code, int) or not 0 <= code < 10**9:
        return "no error code"
    return f"code {code}: {KNOWN_ERRORS.get(code, 'unrecognised error')}"


def classify(answer: ProviderAnswer) -> SendResult:
    """Meta answers `{"messages": [{"id": wamid}]}` or `{"error": {"message", "type", "code", ...}}`."""
    body = dict_or_empty(answer.body)
    status = answer.status_code
    if 200 <= status < 300:
        messages = list_or_empty(body.get("messages"))
        wamid = dict_or_empty(messages[0]).get("id") if messages else None
        if isinstance(wamid, str) and wamid:
            return SendResult(DeliveryResult(ok=True, status_code=status), wamid)
    error = dict_or_empty(body.get("error"))
    code = error.get("code")
    message = f"WhatsApp HTTP {status} {known_error(code)}"
    retry_after = retry_after_seconds(answer.headers.get("Retry-After"))
    if status == 429 or status >= 500 or code in TRANSIENT_ERROR_CODES or 200 <= status < 300:
        # A 2xx without a wamid is a proxy in the way, not Meta's verdict: try again later.
        return SendResult(
            DeliveryResult(ok=False, error=message, retry_after=retry_after, status_code=status)
        )
    return SendResult(DeliveryResult(ok=False, permanent=True, error=message, status_code=status))


def fetch_media(client: httpx.Client, inbox: Inbox, media_id: str) -> Download:
    """GET /{version}/{media-id} (bearer) answers the media URL, its type and size; the URL needs the bearer too
    and expires after a few minutes, so it is never stored."""
    if not inbox.access_token:
        raise Failed("the inbox has no WhatsApp access token", transient=False)
    config = inbox.provider_config
    base = str(config.get("api_base_url") or DEFAULT_API_BASE_URL).rstrip("/")
    version = str(config.get("api_version") or DEFAULT_API_VERSION)
    auth = {"Authorization": f"Bearer {inbox.access_token}"}
    status, body = provider_json(client, f"{base}/{version}/{media_id}", headers=auth, provider="WhatsApp")
    url = body.get("url") if status == 200 else None
    if not isinstance(url, str) or not url:
        raise Failed(f"WhatsApp HTTP {status}: no download URL for the media", transient=False)
    return Download(
        url=url,
        headers=auth,
        declared_type=str(body.get("mime_type") or ""),
        declared_size=reported_size(body.get("file_size")),
    )


class WhatsAppChannel:
    """The WhatsApp Cloud API as a `Channel` (helpdesk.channels.protocol). A GET is Meta's subscription
    handshake (the verify token, then the bare challenge); a POST a signed notification, whose `failed`
    statuses are reported with its messages."""

    channel_type = "whatsapp"
    text_limit: int | None = TEXT_LIMIT
    supports_commands = False
    fetches_media = True
    # Cloud API media: images 5 MB, audio 16 MB, documents 100 MB.
    file_limits: Mapping[str, int] = {"image": 5 * MB, "audio": 16 * MB, "file": 100 * MB, ANY_KIND: 100 * MB}
    files_total_limit: int | None = None
    request_limit: int | None = None

    def __init__(self, *, send_file: FileSender | None = None) -> None:
        # The files of a reply are sent by helpdesk.channels.whatsapp_files, which builds on this module; the
        # registry hands it in (an import here would close a loop). Without it a reply's files are not sent.
        self.send_file = send_file

    def verify(self, inbox: Inbox, request: WebhookRequest) -> None:
        if request.method == "GET":
            # The verify token is the handshake's only credential: a wrong one is a failed authentication.
            handshake(params=request.query, verify_token=str(inbox.provider_config.get("verify_token") or ""))
        else:
            verify(secret=inbox.secret, headers=request.headers, body=request.body)

    def parse(self, inbox: Inbox, request: WebhookRequest) -> Received:
        if request.method == "GET":
            # `verify` has checked the token and that a challenge is present. Meta expects the bare challenge.
            return Received(answer=WebhookAnswer(request.query["hub.challenge"]))
        payload = webhook_json(request.body)
        phone_number_id = str(inbox.provider_config.get("phone_number_id") or "")
        return Received(
            messages=parse(payload, phone_number_id=phone_number_id),
            # Not customer messages, but the only way Meta tells us a reply never arrived (e.g. 131047).
            failures=failed_statuses(payload, phone_number_id=phone_number_id),
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
        return False  # a tap on a reply button or list row needs no acknowledgement
