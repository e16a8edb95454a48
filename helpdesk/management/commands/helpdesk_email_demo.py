"""Write to the demo's support address and see the AI's answer arrive by e-mail, threaded under the mail.

Run `scripts/run` in another terminal first (web server, worker, model), then e.g.:
    .venv/bin/python manage.py helpdesk_email_demo "Can I return an item I bought last week?" "And the shipping?"

The command plays both ends of the mail: the customer's mail client and the support team's SMTP server. Each
text is a mail from the customer to the support address, delivered the way production delivers one: a signed
Mailgun inbound route (POST /webhooks/email/<token>/ with the raw MIME). The answer goes out through the demo e-mail
inbox's SMTP server, which is this command's local SMTP sink (aiosmtpd on 127.0.0.1:8025, the inbox's `smtp_port`),
and is printed with its threading headers. Every text after the first is the customer's reply to the answer before
it, written as a mail client writes one (Re: subject, In-Reply-To, References, the answer quoted below), so it
lands in the same conversation. `--save DIR` keeps every mail as an .eml file a mail client opens.

The sink listens on the one port of 127.0.0.1 that scripts/run allowlists for it besides the demo chat's receiver
(scripts/supervisor.py, demo_outbound_allowlist; DEMO_SMTP_PORT changes it on both sides and in the demo seed).
"""

from __future__ import annotations

import email
import email.policy
import secrets
import threading
import time
from collections.abc import Callable
from email.message import EmailMessage
from email.utils import formataddr, formatdate, make_msgid, parseaddr
from pathlib import Path
from typing import Any

import httpx
from aiosmtpd.controller import Controller
from django.core.management.base import BaseCommand, CommandError, CommandParser

from helpdesk.channels.email.mailgun import signature
from helpdesk.models import Inbox, Message

DEFAULT_TIMEOUT_SECONDS = 300.0  # the bundled 0.5B model on a CPU takes a minute or two per answer


class MailSink:
    """An SMTP server on 127.0.0.1:`port` that keeps every mail it is given (the demo's outgoing mail server)."""

    def __init__(self, port: int) -> None:
        self.mails: list[EmailMessage] = []
        self._arrived = threading.Condition()
        self._controller = Controller(self, hostname="127.0.0.1", port=port)
        self.port = port

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        mail = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        assert isinstance(mail, EmailMessage)  # policy.default builds EmailMessage objects
        with self._arrived:
            self.mails.append(mail)
            self._arrived.notify_all()
        return "250 Message accepted"

    def start(self) -> MailSink:
        try:
            self._controller.start()
        except (OSError, RuntimeError) as exc:  # aiosmtpd reports a taken port as a RuntimeError
            raise CommandError(f"The SMTP sink cannot listen on 127.0.0.1:{self.port}: {exc}") from None
        return self

    def stop(self) -> None:
        self._controller.stop()

    def wait(self, match: Callable[[EmailMessage], bool], *, timeout: float) -> EmailMessage | None:
        """The first mail `match` accepts, waiting up to `timeout` seconds; None when none came."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while True:
                found = next((mail for mail in self.mails if match(mail)), None)
                left = deadline - time.monotonic()
                if found is not None or left <= 0:
                    return found
                self._arrived.wait(left)


def customer_mail(
    *, sender: str, name: str, to: str, subject: str, text: str, answering: EmailMessage | None = None
) -> EmailMessage:
    """A customer's mail as a mail client writes it; `answering`: our answer it replies to (quoted below)."""
    mail = EmailMessage()
    mail["From"] = formataddr((name, sender))
    mail["To"] = to
    mail["Date"] = formatdate(localtime=False)
    mail["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2] or "customer.example")
    body = text
    if answering is None:
        mail["Subject"] = subject
    else:
        answered = str(answering["Subject"] or subject)
        mail["Subject"] = answered if answered.lower().startswith("re:") else f"Re: {answered}"
        answer_id = str(answering["Message-ID"] or "")
        mail["In-Reply-To"] = answer_id
        mail["References"] = " ".join(filter(None, [str(answering["References"] or ""), answer_id]))
        quoted = "\n".join(f"> {line}" for line in _text_of(answering).splitlines())
        body = f"{text}\n\nOn {answering['Date']}, {answering['From']} wrote:\n{quoted}\n"
    mail.set_content(body)
    return mail


def _text_of(mail: EmailMessage) -> str:
    part = mail.get_body(preferencelist=("plain",))
    return str(part.get_content()).replace("\r\n", "\n").strip() if part is not None else ""


def deliver(*, helpdesk: str, inbox: Inbox, mail: EmailMessage, timeout: float = 30.0) -> dict[str, Any]:
    """POST `mail` to the inbox's inbound route as Mailgun does (signed with the inbox's signing key)."""
    timestamp, token = str(int(time.time())), secrets.token_hex(16)
    fields = {
        "timestamp": timestamp,
        "token": token,
        "signature": signature(inbox.secret, timestamp, token),
        "recipient": str(mail["To"]),
        "sender": parseaddr(str(mail["From"]))[1],
    }
    url = f"{helpdesk.rstrip('/')}/webhooks/email/{inbox.webhook_token}/"
    try:
        response = httpx.post(url, data=fields, files={"body-mime": mail.as_bytes()}, timeout=timeout)
    except httpx.HTTPError as exc:
        raise CommandError(
            f"The helpdesk at {helpdesk} does not answer ({exc}); is scripts/run running?"
        ) from None
    if response.status_code != 200:
        raise CommandError(f"The helpdesk refused the mail: {response.status_code} {response.text[:300]}")
    result: dict[str, Any] = response.json()
    return result


def demo_inbox(token: str) -> Inbox:
    """The e-mail inbox the demo writes to: `token`'s, else the first whose SMTP server is this machine."""
    inboxes = Inbox.objects.filter(channel_type=Inbox.ChannelType.EMAIL).order_by("id")
    found = (
        inboxes.filter(webhook_token=token).first()
        if token
        else inboxes.filter(provider_config__smtp_host="127.0.0.1").first()
    )
    if found is None:
        raise CommandError(
            "No e-mail inbox sending through 127.0.0.1: run the demo seed (scripts/run does) or name one with --inbox."
        )
    return found


class Command(BaseCommand):
    help = "Mail the demo support address through its inbound route and print the AI's answer as it arrives by SMTP."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "texts", nargs="+", help="The customer's mails; each after the first answers the last reply."
        )
        parser.add_argument("--helpdesk", default="http://127.0.0.1:8000", help="Where the helpdesk runs.")
        parser.add_argument(
            "--inbox", default="", help="Webhook token of the e-mail inbox (default: the demo's)."
        )
        parser.add_argument("--sender", default="", help="The customer's address (default: a new customer).")
        parser.add_argument("--subject", default="A question about my order")
        parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_SECONDS)
        parser.add_argument("--save", default="", help="Directory to keep every mail in as an .eml file.")

    def handle(self, *args: Any, texts: list[str], **options: Any) -> None:
        inbox = demo_inbox(options["inbox"])
        config = inbox.provider_config if isinstance(inbox.provider_config, dict) else {}
        if str(config.get("smtp_host")) != "127.0.0.1":
            raise CommandError(f"The inbox '{inbox.name}' does not send through 127.0.0.1 (its SMTP host).")
        sender = options["sender"] or f"ann.{secrets.token_hex(3)}@customer.example"
        save = Path(options["save"]) if options["save"] else None
        if save is not None:
            save.mkdir(parents=True, exist_ok=True)
        sink = MailSink(int(str(config.get("smtp_port") or 25))).start()
        self.stdout.write(f"SMTP sink on 127.0.0.1:{sink.port}; writing to '{inbox.name}' as {sender}")
        try:
            answer: EmailMessage | None = None
            for number, text in enumerate(texts, start=1):
                mail = customer_mail(
                    sender=sender,
                    name="Ann Lee",
                    to=str(config.get("from_address") or ""),
                    subject=options["subject"],
                    text=text,
                    answering=answer,
                )
                answer = self._exchange(
                    inbox, mail, sink=sink, timeout=options["timeout"], helpdesk=options["helpdesk"]
                )
                if save is not None:
                    (save / f"{number:02d}-customer.eml").write_bytes(mail.as_bytes())
                    (save / f"{number:02d}-answer.eml").write_bytes(answer.as_bytes())
            if save is not None:
                self.stdout.write(f"The mails are in {save}/ (open them in a mail client: one thread).")
        finally:
            sink.stop()

    def _exchange(
        self, inbox: Inbox, mail: EmailMessage, *, sink: MailSink, timeout: float, helpdesk: str
    ) -> EmailMessage:
        sent_id, started = str(mail["Message-ID"]), time.monotonic()
        status = deliver(helpdesk=helpdesk, inbox=inbox, mail=mail).get("status", "")
        stored = Message.objects.filter(inbox=inbox, provider_message_id=sent_id).first()
        where = f"conversation #{stored.conversation_id}" if stored else "not stored"
        self.stdout.write(
            f"\n-> {mail['Subject']}  {sent_id}  ({status}, {where})\n   {_text_of(mail).splitlines()[0]}"
        )
        answer = sink.wait(lambda sent: sent_id in str(sent["In-Reply-To"] or ""), timeout=timeout)
        if answer is None:
            raise CommandError(
                f"No answer by e-mail within {timeout:.0f} s: the worker may be busy, or the conversation is with "
                "people now (see it in the dashboard)."
            )
        self.stdout.write(f"<- after {time.monotonic() - started:.0f} s")
        for header in ("From", "To", "Subject", "Message-ID", "In-Reply-To", "References", "Reply-To"):
            self.stdout.write(f"   {header}: {answer[header]}")
        self.stdout.write("\n" + "\n".join(f"   {line}" for line in _text_of(answer).splitlines()))
        return answer
