"""Reading one raw e-mail (RFC 5322 / MIME bytes) into what the helpdesk stores, whoever delivered it.

- The text the AI and the agents read is the new part of the message only: the quoted history and the signature
  are cut by mail-parser-reply (a maintained reply parser with English and Chinese, among others, rules). A message
  with only HTML is read as text from its HTML (tags dropped, scripts and styles skipped).
- Threading keys: `Message-ID` (our dedup key: the same mail delivered twice is stored once), `In-Reply-To` and
  `References`, and the recipients (a reply token is in one of them: helpdesk.channels.email.threading).
- Automated mail is recognised so it is stored but never answered by the AI: a delivery status notification
  (multipart/report, a mailer-daemon or postmaster sender, an empty Return-Path), and auto-replies and
  out-of-office answers (`Auto-Submitted` other than "no", `Precedence: bulk/junk/list/auto_reply`, `X-Autoreply`,
  `X-Autorespond`). Answering them would start a loop between two robots.
Malformed input (undecodable headers, 8-bit junk, broken multiparts) never raises out of here except as
WebhookRejected(400): the stdlib parser with `policy.default` records defects instead of failing, and what it
cannot read at all is refused with a clear code.
"""

from __future__ import annotations

import email
import email.policy
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from email.message import EmailMessage, Message
from email.utils import getaddresses, parseaddr
from html.parser import HTMLParser
from typing import TypeVar

from mailparser_reply import EmailReplyParser

from ..base import ReceivedFile, WebhookRejected
from .html import sanitized_html

REPLY_LANGUAGES = ["en", "zh", "de", "fr", "es"]
MAX_TEXT_LENGTH = 20_000
MAX_FILES = 20
"""Files kept of one mail: a mail with more is stored with its first twenty files only."""
T = TypeVar("T")
_MESSAGE_ID = re.compile(r"<[^<>\s]{1,250}>")


@dataclass(frozen=True)
class ParsedMail:
    message_id: str
    """`<...>` as sent; when a mail has none, one derived from its bytes so a redelivery is still one message."""
    sender: str
    """The From address, lower case."""
    sender_name: str
    subject: str
    text: str
    """The new text of the message (quotes and signature cut), for the AI and the agents."""
    in_reply_to: str
    references: tuple[str, ...]
    automated: str
    """Why the mail is automated (e.g. "Auto-Submitted: auto-replied"); empty for a person's mail."""
    recipients: tuple[str, ...] = ()
    """The addresses it was sent to (To, Cc, Delivered-To, X-Original-To), lower case: where a reply token is."""
    html: str = ""
    """Its HTML part, sanitised for people to read (helpdesk.channels.email.html); "" when it has none."""
    cc: tuple[str, ...] = ()
    """The addresses in its Cc header, lower case: whom the customer copied."""
    files: tuple[ReceivedFile, ...] = ()
    """Its attachments and inline images (at most MAX_FILES), as sent; checked where they are stored."""


class _TextOfHtml(HTMLParser):
    SKIP = frozenset({"script", "style", "head", "title"})
    BREAKS = frozenset({"br", "p", "div", "li", "tr", "h1", "h2", "h3", "blockquote"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self.skipping += 1
        elif tag in self.BREAKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP and self.skipping:
            self.skipping -= 1

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


def html_text(html: str) -> str:
    reader = _TextOfHtml()
    reader.feed(html)
    reader.close()
    return re.sub(r"\n\s*\n+", "\n\n", "".join(reader.parts)).strip()


def _header(message: Message, name: str) -> str:
    try:
        value = message.get(name)
    except Exception:  # a header the parser cannot even represent: as absent
        return ""
    return " ".join(str(value).split()) if value is not None else ""


def _body_text(message: EmailMessage) -> str:
    try:
        part = message.get_body(preferencelist=("plain", "html"))
        if part is None:
            return ""
        content = part.get_content()
    except (LookupError, KeyError, ValueError, AssertionError, UnicodeError, AttributeError):
        # An unknown charset or a broken transfer encoding: the bytes as well as they decode.
        payload = message.get_payload(decode=True) if not message.is_multipart() else b""
        return payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
    if not isinstance(content, str):
        return ""
    return html_text(content) if part.get_content_subtype() == "html" else content


def _body_html(message: EmailMessage) -> str:
    """The HTML part, sanitised; "" without one or when it cannot be decoded (the text is read anyway)."""
    try:
        part = message.get_body(preferencelist=("html",))
        content = part.get_content() if part is not None else ""
    except (LookupError, KeyError, ValueError, AssertionError, UnicodeError, AttributeError):
        return ""
    return sanitized_html(content) if isinstance(content, str) else ""


def _files(message: EmailMessage) -> tuple[ReceivedFile, ...]:
    """Every part that is a file rather than the text or HTML read above: one with a file name, or one that is not
    text (an inline image). Reports inside a bounce (message/*, text/rfc822-headers) are text for people."""
    bodies = {id(message.get_body(preferencelist=(kind,))) for kind in ("plain", "html")}
    found: list[ReceivedFile] = []
    for part in message.walk():
        if part.is_multipart() or id(part) in bodies or len(found) >= MAX_FILES:
            continue
        content_type = part.get_content_type()
        name = part.get_filename() or ""
        if not name and content_type.startswith(("text/", "message/")):
            continue
        data = part.get_payload(decode=True)
        if isinstance(data, bytes):
            # A name in 8-bit junk may hold lone surrogates or NUL, which no database stores.
            clean = str(name).encode("utf-8", "replace").decode("utf-8").replace("\x00", "")[:255]
            found.append(ReceivedFile(file_name=clean, content_type=content_type[:100], data=data))
    return tuple(found)


def automated_reason(message: Message, sender: str) -> str:
    """Why `message` was written by a machine (see the module docstring); "" for a person's message."""
    auto_submitted = _header(message, "Auto-Submitted").lower()
    if auto_submitted and auto_submitted != "no":
        return f"Auto-Submitted: {auto_submitted[:40]}"
    precedence = _header(message, "Precedence").lower()
    if precedence in {"bulk", "junk", "list", "auto_reply"}:
        return f"Precedence: {precedence}"
    for name in ("X-Autoreply", "X-Autorespond"):
        if _header(message, name):
            return name
    if message.get_content_type() == "multipart/report":
        return "delivery status notification"
    local = sender.split("@", 1)[0]
    if local in {"mailer-daemon", "postmaster"} or _header(message, "Return-Path") == "<>":
        return "bounce"
    return ""


def _ids(value: str) -> tuple[str, ...]:
    return tuple(_MESSAGE_ID.findall(value))


def _new_text(text: str) -> str:
    """The latest reply's body: without the quoted history and without its signature ("Sent from my iPhone")."""
    if not text.strip():
        return ""
    replies = EmailReplyParser(languages=REPLY_LANGUAGES).read(text=text).replies
    return replies[0].body if replies else text


def parse_mail(raw: bytes) -> ParsedMail:
    """Read one raw mail; WebhookRejected(400) when it has no sender address to answer."""
    try:
        message = email.message_from_bytes(raw, policy=email.policy.default)
    except Exception as exc:  # the parser is lenient; anything it still raises is a mail we cannot read
        raise WebhookRejected(400, "invalid_mime", "The mail could not be read.") from exc
    assert isinstance(message, EmailMessage)
    name, address = parseaddr(_header(message, "From"))
    address = address.strip().lower()
    if "@" not in address or len(address) > 254 or any(c.isspace() for c in address):
        raise WebhookRejected(400, "invalid_sender", "The mail has no sender address.")
    ids = _ids(_header(message, "Message-ID"))
    message_id = ids[0] if ids else f"<sha256-{hashlib.sha256(raw).hexdigest()}@helpdesk.invalid>"
    text = _body_text(message)
    reply = _new_text(text)
    return ParsedMail(
        message_id=message_id,
        sender=address,
        sender_name=name.strip()[:200],
        subject=_header(message, "Subject")[:255],
        text=(reply or text).strip()[:MAX_TEXT_LENGTH],
        in_reply_to=next(iter(_ids(_header(message, "In-Reply-To"))), ""),
        references=_ids(_header(message, "References")),
        automated=automated_reason(message, address),
        recipients=tuple(
            recipients(", ".join(_header(message, h) for h in ("To", "Cc", "Delivered-To", "X-Original-To")))
        )[:50],
        html=_body_html(message),
        cc=tuple(recipients(_header(message, "Cc")))[:50],
        files=_safely(_files, message, ()),
    )


def _safely(read: Callable[[EmailMessage], T], message: EmailMessage, default: T) -> T:
    """`read(message)`, or `default` when a damaged part makes the stdlib raise: the text is stored anyway."""
    try:
        return read(message)
    except (LookupError, KeyError, ValueError, AssertionError, UnicodeError, AttributeError, TypeError):
        return default


def recipients(value: str) -> list[str]:
    return [address.lower() for _, address in getaddresses([value]) if "@" in address]
