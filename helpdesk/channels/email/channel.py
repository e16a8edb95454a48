"""The e-mail channel as a `Channel` (helpdesk.channels.protocol): Mailgun's signed inbound route or an IMAP
mailbox (imap.py, `poll`) in, SMTP out.

A mail becomes one InboundMessage: the sender's address is the contact (source id), the Message-ID the dedup
key, its headers or reply address the conversation it continues (helpdesk.channels.email.threading), the subject
names a new conversation, and automated mail (bounces, auto-replies) is marked so the AI never
answers it (helpdesk.channels.email.mime).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import httpx

from helpdesk.conf import helpdesk_setting

from ..base import (
    DeliveryResult,
    InboundContact,
    InboundMessage,
    PollResult,
    WebhookRejected,
    storable,
)
from ..media import Download, Refused
from ..outbound_files import ANY_KIND, MB, OWN_LIMIT
from ..protocol import Received, SentParts, WebhookRequest, not_supported
from . import imap, mailgun, smtp
from .mime import parse_mail
from .threading import thread_of

if TYPE_CHECKING:
    from helpdesk.models import Inbox, Message

logger = logging.getLogger(__name__)


def inbound_of(raw: bytes, *, inbox: Inbox, recipient: str = "") -> InboundMessage:
    """One mail as a message of `inbox`, threaded (helpdesk.channels.email.threading); `recipient`: the address
    the delivering service names (Mailgun's `recipient` field), where the reply token may be when no header is."""
    mail = parse_mail(raw)
    # What every database stores: NUL characters (PostgreSQL refuses them) and lone surrogates left out.
    sender, name, text, subject, message_id, html = storable(
        [mail.sender, mail.sender_name, mail.text or "(no text)", mail.subject, mail.message_id, mail.html]
    )
    return InboundMessage(
        provider_message_id=message_id,
        contact=InboundContact(source_id=sender, name=name, email=sender),
        text=text,
        subject=subject,
        automated=mail.automated,
        thread=thread_of(inbox, mail, recipients=[recipient] if recipient else []),
        display_html=html,
        cc=tuple(storable(list(mail.cc))),
        files=mail.files,
    )


def _poll(inbox: Inbox, *, store: Callable[[InboundMessage], bool], timeout: float, limit: int) -> PollResult:
    stored = duplicates = refused = 0
    with imap.Mailbox(inbox, timeout=timeout) as box:
        uids, too_big = box.unseen(limit)
        for uid in too_big:
            logger.warning(
                "inbox %s: mail uid %s is over %s bytes, left unread", inbox.id, uid, imap.MAX_MAIL_BYTES
            )
        for uid in uids:
            raw = box.read(uid)
            if raw is None:
                continue  # expunged meanwhile by another client
            try:
                created = store(inbound_of(raw, inbox=inbox))
            except WebhookRejected as exc:
                logger.warning("inbox %s: mail uid %s refused: %s", inbox.id, uid, exc.code)
                refused += 1
            else:
                stored, duplicates = stored + created, duplicates + (not created)
            box.mark_seen([uid])  # one at a time: what is marked is stored (or set aside)
        # Oversized mail is marked seen too, so that one of them does not hold up every later poll.
        box.mark_seen(too_big)
    return PollResult(stored=stored, duplicates=duplicates, refused=refused + len(too_big))


TEXT_LIMIT = 10_000
"""What the AI is told one reply may hold: a letter, longer than a chat message (Slack's section 3,000, Telegram's
and WhatsApp's 4,096). Nothing is cut at send time: one mail carries any length (an agent's long answer too)."""

AI_REPLIES_PER_CONTACT_PER_HOUR = 10
"""Default of the inbox's `ai_replies_per_hour` (helpdesk.services.rate_limits): a person rarely writes support
ten mails an hour; an auto-responder that does not mark its mail, or a mail loop, does it in minutes."""


class EmailChannel:
    """E-mail: inbound through a Mailgun route, replies over the inbox's SMTP server."""

    channel_type = "email"
    text_limit: int | None = TEXT_LIMIT
    ai_replies_per_contact_per_hour = AI_REPLIES_PER_CONTACT_PER_HOUR
    supports_commands = False
    shows_quick_replies = False  # a letter carries no buttons
    reply_window_hours: int | None = None
    shows_away_message = False
    fetches_media = False
    # The reply mail carries its files: 25 MB each and together, what common mail services accept.
    file_limits: Mapping[str, int] = {ANY_KIND: OWN_LIMIT}
    files_total_limit: int | None = 25 * MB
    # Mailgun posts the whole mail in one request, and takes mail up to 25 MB: a photo or a PDF is far over the
    # server's usual request limit, and a refused delivery is retried for hours, then dropped. Room for the form.
    request_limit: int | None = 26 * MB

    def verify(self, inbox: Inbox, request: WebhookRequest) -> None:
        mailgun.verify(
            signing_key=inbox.secret,
            fields=mailgun.form_fields(request.headers.get("Content-Type", ""), request.body),
            window_seconds=helpdesk_setting("WEBHOOK_REPLAY_WINDOW_SECONDS"),
        )

    def parse(self, inbox: Inbox, request: WebhookRequest) -> Received:
        fields = mailgun.form_fields(request.headers.get("Content-Type", ""), request.body)
        raw = fields.get("body-mime")
        if not raw:
            raise WebhookRejected(400, "invalid_payload", "body-mime (the raw mail) is required.")
        recipient = fields.get("recipient", b"").decode("utf-8", "replace")[:1000]
        return Received(messages=[inbound_of(raw, inbox=inbox, recipient=recipient)])

    def send(self, message: Message, *, timeout: float, parts: SentParts) -> DeliveryResult:
        return smtp.send(message, timeout=timeout)  # one mail whatever the length: no parts

    def polls(self, inbox: Inbox) -> bool:
        """Whether the inbox has a mailbox to read (helpdesk.services.polling asks every inbox's channel)."""
        return imap.configured(inbox)

    def poll(
        self, inbox: Inbox, *, store: Callable[[InboundMessage], bool], timeout: float, limit: int = 50
    ) -> PollResult:
        """Read up to `limit` unseen mails of the inbox's mailbox; `store` stores one message (True when new).
        A mail is marked seen only after `store` returned (or it was refused as unreadable, logged)."""
        return _poll(inbox, store=store, timeout=timeout, limit=limit)

    def fetch_media(self, client: httpx.Client, inbox: Inbox, provider_ref: str) -> Download:
        raise Refused("mail attachments arrive with the mail, not from a provider API")

    def set_commands(
        self, inbox: Inbox, commands: Sequence[tuple[str, str]], *, timeout: float = 10.0
    ) -> DeliveryResult:
        return not_supported("command menu")

    def answer_callback(
        self, inbox: Inbox, callback_id: str, *, text: str = "", timeout: float = 5.0
    ) -> bool:
        return False
