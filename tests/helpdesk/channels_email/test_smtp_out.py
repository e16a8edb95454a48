"""Replies out over SMTP to a real SMTP server (aiosmtpd) on 127.0.0.1: threaded by Message-ID, In-Reply-To and
References with the conversation's subject; refusals classified for the retry policy; the outbound policy asked."""

from __future__ import annotations

import email
import email.policy
from collections.abc import Iterator

import pytest
from aiosmtpd.controller import Controller

from helpdesk.channels.email.mime import parse_mail
from helpdesk.channels.email.threading import token_conversation
from helpdesk.channels.registry import channel_for
from helpdesk.models import Message
from helpdesk.services.attachments import attachment_store_received
from helpdesk.services.messages import message_create_agent_reply
from tests.factories import UserFactory
from tests.helpdesk.channels_email.support import email_inbox, post, signed_fields
from tests.helpdesk.channels_email.test_mime import fixture
from tests.support.servers import free_port

pytestmark = pytest.mark.django_db


class Sink:
    """Keeps every mail it is given; refuses recipients at refused.example with 550."""

    def __init__(self) -> None:
        self.mails: list[tuple[str, list[str], bytes]] = []

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.endswith("@refused.example"):
            return "550 5.1.1 No such user"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.mails.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.content))
        return "250 Message accepted"


@pytest.fixture
def sink() -> Iterator[tuple[Sink, int]]:
    handler, port = Sink(), free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield handler, port
    finally:
        controller.stop()


def reply_to_mail(client, inbox, raw: bytes, text: str) -> Message:
    assert post(client, inbox, signed_fields(raw)).status_code == 200
    conversation = Message.objects.filter(inbox=inbox).latest("id").conversation
    return message_create_agent_reply(conversation=conversation, user=UserFactory(), content=text)


def send(message: Message):
    message = Message.objects.select_related("inbox", "conversation__contact_inbox").get(pk=message.pk)
    return channel_for(message.inbox).send(message, timeout=5.0, parts=None)  # type: ignore[arg-type]


def test_a_reply_arrives_threaded_under_the_customers_mail(client, sink):
    handler, port = sink
    inbox = email_inbox(smtp_host="127.0.0.1", smtp_port=str(port), smtp_security="none")
    first = reply_to_mail(client, inbox, fixture("gmail_reply"), "We will send it to your office.")

    result = send(first)

    assert result.ok, result.error
    ((sender, recipients, raw),) = handler.mails
    assert (sender, recipients) == ("help@shop.example", ["ann.lee@gmail.com"])
    mail = email.message_from_bytes(raw, policy=email.policy.default)
    assert mail["From"] == "Shop Support <help@shop.example>"
    assert mail["Subject"] == "Re: Where is my parcel?"
    assert mail["Message-ID"] == f"<helpdesk-reply-{first.id}@shop.example>"
    assert mail["In-Reply-To"] == "<CAF=k2pT3x7Q+gmail-1@mail.gmail.com>"
    assert mail["References"] == "<CAF=k2pT3x7Q+gmail-1@mail.gmail.com>"
    assert mail["Auto-Submitted"] == "auto-replied"
    # Replies go to the signed reply address of this conversation (threading when headers are lost).
    assert mail["Reply-To"].addresses[0].addr_spec.startswith("help+c")
    assert token_conversation(inbox.id, [mail["Reply-To"].addresses[0].addr_spec]) == first.conversation_id
    assert mail.get_content().strip() == "We will send it to your office."

    # Her answer to our reply (In-Reply-To: our Message-ID) continues the conversation.
    second_mail = (
        fixture("gmail_reply")
        .replace(b"gmail-1@", b"gmail-2@")
        .replace(b"helpdesk-reply-10@", f"helpdesk-reply-{first.id}@".encode())
    )
    second = reply_to_mail(client, inbox, second_mail, "Done.")
    assert send(second).ok
    threaded = email.message_from_bytes(handler.mails[1][2], policy=email.policy.default)
    assert threaded["In-Reply-To"] == "<CAF=k2pT3x7Q+gmail-2@mail.gmail.com>"
    assert threaded["References"].split() == [
        "<CAF=k2pT3x7Q+gmail-1@mail.gmail.com>",
        f"<helpdesk-reply-{first.id}@shop.example>",
        "<CAF=k2pT3x7Q+gmail-2@mail.gmail.com>",
    ]


def test_a_refused_recipient_is_a_permanent_failure(client, sink):
    handler, port = sink
    inbox = email_inbox(smtp_host="127.0.0.1", smtp_port=str(port), smtp_security="none")
    raw = fixture("apple_mail").replace(b"carla@icloud.com", b"carla@refused.example")
    result = send(reply_to_mail(client, inbox, raw, "Here is your label."))
    assert not result.ok
    assert result.permanent
    assert handler.mails == []


def test_a_server_that_is_down_is_retried_later(client):
    inbox = email_inbox(smtp_host="127.0.0.1", smtp_port=str(free_port()), smtp_security="none")
    result = send(reply_to_mail(client, inbox, fixture("apple_mail"), "Hello"))
    assert not result.ok
    assert not result.permanent
    assert "SMTP connection failed" in result.error


def test_an_smtp_host_the_outbound_policy_refuses_is_never_contacted(client, sink, settings):
    handler, port = sink
    settings.HELPDESK = {**settings.HELPDESK, "OUTBOUND_ALLOWED_HOSTS": []}
    inbox = email_inbox(smtp_host="127.0.0.1", smtp_port=str(port), smtp_security="none")
    result = send(reply_to_mail(client, inbox, fixture("apple_mail"), "Hello"))
    assert (result.ok, result.permanent) == (False, True)
    assert "outbound policy" in result.error
    assert handler.mails == []


def test_an_inbox_without_smtp_settings_fails_permanently_with_a_reason(client):
    inbox = email_inbox()
    result = send(reply_to_mail(client, inbox, fixture("apple_mail"), "Hello"))
    assert (result.ok, result.permanent, result.error) == (
        False,
        True,
        "The inbox has no SMTP host or From address.",
    )


def test_a_reply_is_written_as_a_letter_with_the_inboxs_greeting_and_sign_off(client, sink):
    handler, port = sink
    inbox = email_inbox(
        smtp_host="127.0.0.1",
        smtp_port=str(port),
        smtp_security="none",
        greeting="Hello {name},",
        sign_off="Best regards,\nShop Support",
    )
    reply = reply_to_mail(client, inbox, fixture("gmail_reply"), "It will go to your office.")
    Message.objects.filter(pk=reply.pk).update(quick_replies=["Track my parcel"])

    assert send(reply).ok
    body = email.message_from_bytes(handler.mails[0][2], policy=email.policy.default).get_content()
    body = body.replace("\r\n", "\n")  # SMTP's line ends
    assert body == "Hello Ann Lee,\n\nIt will go to your office.\n\nBest regards,\nShop Support\n"
    assert "Track my parcel" not in body  # chat buttons are not part of a letter


def test_an_agents_file_goes_out_as_a_mime_part_of_the_reply(client, sink):
    handler, port = sink
    inbox = email_inbox(smtp_host="127.0.0.1", smtp_port=str(port), smtp_security="none")
    photo = parse_mail(fixture("gmail_attachments")).files[1].data  # a real PNG
    reply = reply_to_mail(client, inbox, fixture("gmail_reply"), "Here is the label.")
    stored = attachment_store_received(
        message=reply, file_name="label.png", declared_type="image/png", data=photo
    )
    refused = attachment_store_received(
        message=reply, file_name="notes.pdf", declared_type="application/pdf", data=b"%PDF-1.4"
    )
    assert (stored.status, refused.status) == ("stored", "refused")

    assert send(reply).ok

    mail = email.message_from_bytes(handler.mails[0][2], policy=email.policy.default)
    assert mail.get_content_type() == "multipart/mixed"
    assert mail.get_body(preferencelist=("plain",)).get_content().strip() == "Here is the label."
    (part,) = mail.iter_attachments()  # the refused file was never stored, so it is not sent
    assert (part.get_filename(), part.get_content_type()) == ("label.png", "image/png")
    assert part.get_content() == photo


def test_a_reply_whose_file_is_gone_from_storage_fails_with_the_reason(client, sink):
    handler, port = sink
    inbox = email_inbox(smtp_host="127.0.0.1", smtp_port=str(port), smtp_security="none")
    photo = parse_mail(fixture("gmail_attachments")).files[1].data
    reply = reply_to_mail(client, inbox, fixture("gmail_reply"), "Here is the label.")
    stored = attachment_store_received(
        message=reply, file_name="label.png", declared_type="image/png", data=photo
    )
    stored.file.storage.delete(stored.file.name)

    result = send(reply)

    assert (result.ok, result.permanent, result.error) == (
        False,
        True,
        "The file label.png is no longer stored.",
    )
    assert handler.mails == []


def test_an_agents_reply_keeps_the_customers_cc_and_the_ais_goes_to_the_customer_alone(client, sink):
    handler, port = sink
    inbox = email_inbox(smtp_host="127.0.0.1", smtp_port=str(port), smtp_security="none")
    # The customer copied two people, our own address and one of our reply-token aliases.
    raw = fixture("html_newsletter_style").replace(
        b"Cc: ", b"Cc: help@shop.example, Support <help+c1-abc@shop.example>, ", 1
    )
    reply = reply_to_mail(client, inbox, raw, "The invoice is attached.")
    assert reply.conversation.custom_attributes["cc"].endswith("finance@example.net, tom@example.net")
    assert send(reply).ok

    ((_, recipients, data),) = handler.mails
    mail = email.message_from_bytes(data, policy=email.policy.default)
    assert mail["To"] == "dana.weiss@example.net"
    assert mail["Cc"] == "finance@example.net, tom@example.net"
    assert sorted(recipients) == ["dana.weiss@example.net", "finance@example.net", "tom@example.net"]

    ai_reply = Message.objects.create(
        account=inbox.account,
        inbox=inbox,
        conversation=reply.conversation,
        message_type=Message.Type.OUTGOING,
        sender_type=Message.SenderType.ASSISTANT,
        content="Anything else?",
    )
    assert send(ai_reply).ok
    ai_mail = email.message_from_bytes(handler.mails[1][2], policy=email.policy.default)
    assert ai_mail["Cc"] is None and handler.mails[1][1] == ["dana.weiss@example.net"]
