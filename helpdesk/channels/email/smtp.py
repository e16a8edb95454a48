"""Sending a reply as e-mail over the inbox's SMTP server, threaded in the customer's mail client.

Settings (`provider_config`): `smtp_host`, `smtp_port` (default 587), `smtp_security` ("starttls", the default;
"ssl"; or "none" for a relay on a private network), `smtp_username`, `from_address`, `from_name`, and the letter's
`greeting` ("Hello {name},") and `sign_off` ("Best regards, Acme support"). The SMTP
password is encrypted at rest (Inbox.smtp_password, helpdesk.crypto), write-only, read only to log in.
The server's address goes through the outbound policy (helpdesk.outbound) like any address we reach for a tenant,
and the connection is made to the address the policy checked (a second DNS answer cannot move it).

Threading: our reply's `Message-ID` is derived from the message id (a retry sends the same id, so a mail client
shows one mail), `In-Reply-To` names the customer's latest mail and `References` the conversation's mails;
`Reply-To` is the From address with the conversation's signed reply token (helpdesk.channels.email.threading).
"""

from __future__ import annotations

import smtplib
import socket
import ssl
from email.message import EmailMessage
from email.utils import formataddr, formatdate
from typing import TYPE_CHECKING

from helpdesk.crypto import SecretUnreadable
from helpdesk.models import Attachment
from helpdesk.outbound import OutboundRefused
from helpdesk.outbound.policy import OutboundPolicy, checked_addresses

from ..base import DeliveryResult
from .letter import letter_text
from .mime import recipients
from .threading import reply_address

if TYPE_CHECKING:
    from helpdesk.models import Inbox, Message

MAX_REFERENCES = 20
MAX_COPIED = 50  # as many as a mail's Cc is read for (helpdesk.channels.email.mime)
PASSWORD_UNREADABLE = (
    "The inbox's SMTP password cannot be decrypted with the configured keys (HELPDESK_SECRETS_KEYS): "
    "put the key it was stored with back, or set the password again."
)


def reply_message_id(message_id: int, from_address: str) -> str:
    domain = from_address.rsplit("@", 1)[-1] or "helpdesk.invalid"
    return f"<helpdesk-reply-{message_id}@{domain}>"


def _thread(message: Message, from_address: str) -> tuple[str, list[str]]:
    """(In-Reply-To, References) for a reply in `message`'s conversation, oldest mail first."""
    earlier = message.conversation.messages.filter(id__lt=message.id, private=False).order_by("id")
    ids: list[str] = []
    last_incoming = ""
    for row in earlier.values("id", "message_type", "provider_message_id"):
        provider_id = str(row["provider_message_id"] or "")
        if row["message_type"] == "incoming" and provider_id.startswith("<"):
            ids.append(provider_id)
            last_incoming = provider_id
        elif row["message_type"] == "outgoing":
            ids.append(reply_message_id(row["id"], from_address))
    # A follow-up of a chat (no customer mail) answers our own previous mail: the client threads them.
    return last_incoming or (ids[-1] if ids else ""), ids[-MAX_REFERENCES:]


def build(message: Message, *, via: Inbox | None = None, to: str = "") -> EmailMessage:
    """The reply as a mail. `via`: the e-mail inbox whose From and letter settings to use (default: the
    message's own inbox); `to`: the recipient (default: the conversation's contact address)."""
    inbox = via or message.inbox
    config = inbox.provider_config if isinstance(inbox.provider_config, dict) else {}
    from_address = str(config.get("from_address") or "")
    subject = message.conversation.subject or message.inbox.name  # a chat follow-up: the chat inbox
    mail = EmailMessage()
    mail["From"] = formataddr((str(config.get("from_name") or inbox.name), from_address))
    mail["To"] = to or message.conversation.contact_inbox.source_id
    # A chat's follow-up (`to` given) goes to the visitor alone; a mail conversation's reply keeps its Cc.
    copied = [] if to else _copied(message, from_address=from_address, to=str(mail["To"]))
    if copied:
        mail["Cc"] = ", ".join(copied)
    mail["Subject"] = subject if subject.lower().startswith("re:") else f"Re: {subject}"
    mail["Date"] = formatdate(localtime=False)
    mail["Message-ID"] = reply_message_id(message.id, from_address)
    # The signed reply address threads the customer's answer even when their client drops In-Reply-To. It is
    # signed for the sending inbox, which is where the answer arrives (a widget chat's follow-up: the e-mail
    # inbox, whose threading returns it to the chat).
    reply_to = reply_address(from_address, inbox_id=inbox.id, conversation_id=message.conversation_id)
    if reply_to:
        mail["Reply-To"] = formataddr((str(config.get("from_name") or inbox.name), reply_to))
    in_reply_to, references = _thread(message, from_address)
    if in_reply_to:
        mail["In-Reply-To"] = in_reply_to
    if references:
        mail["References"] = " ".join(references)
    # We are a robot answering a person: say so, so their auto-responders do not answer us (RFC 3834).
    mail["Auto-Submitted"] = "auto-replied"
    mail.set_content(_as_letter(message, config))
    _attach_files(mail, message)
    return mail


def _copied(message: Message, *, from_address: str, to: str) -> list[str]:
    """Whom a person's reply copies: those the customer's latest mail copied (the conversation's `cc`
    attribute), as "reply all" does, less our own address (and its reply-token aliases) and the customer.
    The AI's replies go to the customer alone: a machine does not write to people who did not write to us."""
    if message.sender_type != message.SenderType.USER:
        return []
    attributes = message.conversation.custom_attributes or {}
    ours_local, _, ours_domain = from_address.lower().partition("@")
    kept: list[str] = []
    for address in recipients(str(attributes.get("cc") or "")):
        local, _, domain = address.partition("@")
        ours = domain == ours_domain and (local == ours_local or local.startswith(ours_local + "+"))
        if not ours and address != to.lower() and address not in kept:
            kept.append(address)
    return kept[:MAX_COPIED]


class MissingFile(Exception):
    """A file of the reply is recorded as stored but is no longer in the storage."""


def _attach_files(mail: EmailMessage, message: Message) -> None:
    """The reply's stored files (an agent's attachment, checked when it was stored) as MIME parts, by the type
    found in their bytes."""
    for attachment in message.files.filter(status=Attachment.Status.STORED).order_by("id"):
        try:
            with attachment.file.open("rb") as handle:
                data = handle.read()
        except (FileNotFoundError, ValueError) as exc:
            raise MissingFile(
                f"The file {attachment.file_name or attachment.pk} is no longer stored."
            ) from exc
        maintype, _, subtype = attachment.content_type.split(";", 1)[0].strip().partition("/")
        extension = attachment.file.name.rpartition(".")[2]
        mail.add_attachment(
            data,
            maintype=maintype or "application",
            subtype=subtype or "octet-stream",
            filename=attachment.file_name or f"{attachment.kind}-{attachment.pk}.{extension}",
        )


def _as_letter(message: Message, config: dict[str, object]) -> str:
    """The reply as a letter (helpdesk.channels.email.letter). Quick-reply suggestions are a chat's buttons and
    are left out: the text stands on its own."""
    return letter_text(
        message.content,
        name=message.conversation.contact.name if message.conversation.contact else "",
        greeting=str(config.get("greeting") or ""),
        sign_off=str(config.get("sign_off") or ""),
        written_by_ai=message.sender_type == message.SenderType.ASSISTANT,
    )


def send(message: Message, *, timeout: float, via: Inbox | None = None, to: str = "") -> DeliveryResult:
    """Send `message` as a mail (see build for `via` and `to`); the result tells the retry policy what failed."""
    inbox = via or message.inbox
    config = inbox.provider_config if isinstance(inbox.provider_config, dict) else {}
    host = str(config.get("smtp_host") or "")
    if not host or not config.get("from_address"):
        return DeliveryResult(ok=False, permanent=True, error="The inbox has no SMTP host or From address.")
    security = str(config.get("smtp_security") or "starttls")
    port = int(str(config.get("smtp_port") or (465 if security == "ssl" else 587)))
    try:
        address = str(checked_addresses(host, port, OutboundPolicy.from_settings())[0])
    except OutboundRefused as exc:
        return DeliveryResult(
            ok=False, permanent=True, error=f"SMTP host refused by the outbound policy: {exc}"
        )
    try:
        mail = build(message, via=inbox, to=to)
        password = inbox.smtp_password() if config.get("smtp_username") else ""
    except MissingFile as exc:
        return DeliveryResult(ok=False, permanent=True, error=str(exc))
    except SecretUnreadable:
        return DeliveryResult(ok=False, permanent=True, error=PASSWORD_UNREADABLE)
    try:
        _deliver(
            mail,
            address=address,
            host=host,
            port=port,
            security=security,
            timeout=timeout,
            password=password,
            username=str(config.get("smtp_username") or ""),
        )
    except smtplib.SMTPResponseException as exc:
        # 4xx: try again later; 5xx: the server will not take it (bad recipient, refused sender).
        permanent = 500 <= exc.smtp_code < 600
        return DeliveryResult(ok=False, permanent=permanent, error=f"SMTP server answered {exc.smtp_code}")
    except smtplib.SMTPRecipientsRefused:
        return DeliveryResult(ok=False, permanent=True, error="SMTP server refused the recipient")
    except (smtplib.SMTPException, OSError) as exc:
        return DeliveryResult(ok=False, error=f"SMTP connection failed ({type(exc).__name__})")
    return DeliveryResult(ok=True)


class _Pinned(smtplib.SMTP):
    """An SMTP client that connects to the address the outbound policy checked while speaking to (and checking
    the TLS certificate of) the host name."""

    def __init__(self, *, address: str, tls: ssl.SSLContext | None, timeout: float) -> None:
        self._address, self._tls = address, tls
        super().__init__(timeout=timeout)

    def _get_socket(self, host: str, port: int, timeout: float) -> socket.socket:
        sock = socket.create_connection((self._address, port), timeout)
        return self._tls.wrap_socket(sock, server_hostname=host) if self._tls is not None else sock


def _deliver(
    mail: EmailMessage,
    *,
    address: str,
    host: str,
    port: int,
    security: str,
    timeout: float,
    username: str,
    password: str,
) -> None:
    context = ssl.create_default_context()
    with _Pinned(address=address, tls=context if security == "ssl" else None, timeout=timeout) as client:
        client.connect(host, port)
        if security == "starttls":
            client.starttls(context=context)
        if username:
            client.login(username, password)
        client.send_message(mail)
