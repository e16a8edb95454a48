"""What every channel shares: the parsed inbound message, errors, and the delivery result."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, replace
from typing import Any


class WebhookRejected(Exception):
    """The request must be refused; `status` is the HTTP answer (401 forged, 400 malformed). Nothing is stored."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


@dataclass(frozen=True)
class InboundContact:
    source_id: str
    """The channel's own id for the customer (chat id, phone number, the API sender's contact id)."""
    name: str = ""
    email: str = ""


@dataclass(frozen=True)
class Thread:
    """The conversation a message answers, as its channel proved it (e-mail: its headers or a signed reply
    address). Only ever one of the sender's own conversations in the inbox the message came to."""

    conversation_id: int | None
    """The conversation it continues; None: the message starts a new conversation."""
    how: str = ""
    """What proved it ("in-reply-to", "references", "reply-token"); empty for a new conversation."""
    inbox_id: int | None = None
    """Set when the conversation is another inbox's of the same account (a widget chat whose away-hours answers
    this e-mail inbox mailed): the message is stored there, as that inbox's contact `source_id`."""
    source_id: str = ""
    """The contact's source id in `inbox_id` (empty when `inbox_id` is None)."""


@dataclass(frozen=True)
class ReceivedFile:
    """A file that arrives inside a message (an e-mail's attachment), bytes and all: checked and stored at
    ingest (helpdesk.services.attachments.attachment_store_received), never fetched."""

    file_name: str
    content_type: str
    """As the sender declared it; the first bytes decide what is stored."""
    data: bytes


@dataclass(frozen=True)
class InboundMessage:
    """A customer message, parsed from any channel's payload."""

    provider_message_id: str
    """The sender's id for this message: the dedup key, unique per inbox."""
    contact: InboundContact
    text: str
    attachments: list[dict[str, Any]] = field(default_factory=list)
    callback_id: str = ""
    """A button tap the provider waits to have acknowledged (`Channel.answer_callback`, e.g. to stop the
    button's spinner): the provider's id for the tap; empty for every other message."""
    subject: str = ""
    """The subject a new conversation takes (e-mail); empty for chat channels."""
    automated: str = ""
    """Why a machine wrote it (a bounce, an auto-reply): stored, never answered by the AI; empty for a person."""
    thread: Thread | None = None
    """Set by a channel that threads by itself (e-mail); None for chat: the sender's open conversation."""
    display_html: str = ""
    """An HTML rendering kept for people to read, already sanitised by the channel (e-mail); the AI reads `text`."""
    cc: tuple[str, ...] = ()
    """Others the customer copied (an e-mail's Cc), shown to the agents on the conversation."""
    files: tuple[ReceivedFile, ...] = ()
    """Files that came inside the message (e-mail); `attachments` are files reported by reference."""


@dataclass(frozen=True)
class PollResult:
    """What one poll of a channel that reads its messages itself (an e-mail inbox's IMAP mailbox) did."""

    stored: int = 0
    """New messages."""
    duplicates: int = 0
    """Messages already stored (delivered by a webhook too, or read again after a crash)."""
    refused: int = 0
    """Unreadable (no sender, too big): set aside and logged, never lost from the provider's side."""


class PollUnavailable(Exception):
    """The channel cannot be read now (not configured, refused by the outbound policy, login or connection
    failed). The message names the kind of failure only, never a credential."""


# Column sizes of what an inbound message stores (helpdesk.models); checked here because PostgreSQL refuses a
# longer value with an error (a 500 the provider retries for days) while SQLite stores it silently.
MAX_ID_LENGTH = 255
MAX_NAME_LENGTH = 200
MAX_EMAIL_LENGTH = 254


def fit_for_storage(inbound: InboundMessage) -> InboundMessage:
    """The message as the database can store it: an id longer than its column is refused (no provider sends
    one; it cannot be deduplicated if cut), a long name is shortened and an over-long e-mail dropped."""
    if len(inbound.provider_message_id) > MAX_ID_LENGTH:
        raise WebhookRejected(
            400, "invalid_message_id", f"Message id is longer than {MAX_ID_LENGTH} characters."
        )
    contact = inbound.contact
    if len(contact.source_id) > MAX_ID_LENGTH:
        raise WebhookRejected(
            400, "invalid_contact_id", f"Contact id is longer than {MAX_ID_LENGTH} characters."
        )
    fitted = replace(
        contact,
        name=contact.name[:MAX_NAME_LENGTH],
        email=contact.email if len(contact.email) <= MAX_EMAIL_LENGTH else "",
    )
    return replace(inbound, contact=fitted)


@dataclass(frozen=True)
class FailedStatus:
    """A provider's later verdict that a message we sent was not delivered (reported by a webhook, after the
    send itself was accepted)."""

    provider_message_id: str
    """The id our send got back (a WhatsApp wamid, say)."""
    error: str
    """Code and title in our wording, e.g. "WhatsApp 131047: Re-engagement message"."""


@dataclass(frozen=True)
class DeliveryResult:
    """What a channel's `send` reports. `retry_after` is honoured when the provider sends one."""

    ok: bool
    permanent: bool = False
    error: str = ""
    retry_after: float | None = None
    status_code: int | None = None


def json_depth(value: Any) -> int:
    """Nesting depth of a parsed JSON value, computed iteratively so a hostile payload cannot exhaust the stack."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
    return deepest


# JSON joins a valid surrogate pair into one character, so any surrogate left in a decoded string is lone.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def finite_float(text: str) -> float:
    """A JSON number as a float, refused when it overflows: Python reads `1e999` as inf, which no JSON column
    can store (SQLite's JSON_VALID check and PostgreSQL's jsonb refuse `Infinity`: a 500 at the insert)."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:20]} is out of range for a JSON number")
    return value


def storable(value: Any) -> Any:
    """The parsed value with text every database can store: a lone surrogate (`"\\ud800"`, valid JSON but
    not UTF-8) becomes U+FFFD and NUL characters (refused by PostgreSQL) are dropped. Iterative, like
    `json_depth`."""

    def clean(text: str) -> str:
        return LONE_SURROGATE.sub("\ufffd", text).replace("\x00", "")

    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        container, key = stack.pop()
        item = container[key]
        if isinstance(item, str):
            container[key] = clean(item)
        elif isinstance(item, list):
            stack.extend((item, i) for i in range(len(item)))
        elif isinstance(item, dict):
            for k in list(item):
                cleaned = clean(k)
                if cleaned != k:
                    item[cleaned] = item.pop(k)
                stack.append((item, cleaned))
    return root[0]


def parse_json_body(raw: bytes, *, max_depth: int) -> Any:
    """Decode a webhook body. Every way it can be malformed becomes a 400, never a 500; text is made storable."""
    try:
        text = raw.decode("utf-8")
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=finite_float)
    except UnicodeDecodeError as exc:
        raise WebhookRejected(400, "invalid_encoding", "Body is not UTF-8.") from exc
    except RecursionError as exc:
        raise WebhookRejected(400, "too_deep", "JSON is nested too deeply.") from exc
    except ValueError as exc:
        raise WebhookRejected(400, "invalid_json", f"Body is not valid JSON: {exc}") from exc
    if json_depth(value) > max_depth:
        raise WebhookRejected(400, "too_deep", f"JSON is nested deeper than {max_depth} levels.")
    return storable(value)
