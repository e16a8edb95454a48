"""The README's e-mail demo, `manage.py helpdesk_email_demo`, with real parts: the command's own SMTP sink
(aiosmtpd on 127.0.0.1), the real web server taking the command's signed Mailgun delivery, and a real Celery
worker answering with the scripted model server and sending the answer through the sink. The customer's reply to
the answer (written as a mail client writes one) lands in the same conversation, and both answers thread."""

from __future__ import annotations

import email
import email.policy
import io

import pytest
from django.core.management import call_command

from helpdesk.models import Message
from tests.factories import AssistantInboxFactory
from tests.helpdesk.channels_email.support import email_inbox
from tests.support.database import database_url_for_subprocess
from tests.support.servers import free_port, start_web_server

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def web(redis_url, tmp_path):
    server = start_web_server(
        env={"DATABASE_URL": database_url_for_subprocess(), "REDIS_URL": redis_url},
        log_path=tmp_path / "web.log",
    )
    yield server
    server.stop()


def test_the_email_demo_mails_the_support_address_and_prints_the_threaded_answers(mail_stack, web, tmp_path):
    port = free_port()  # the command's sink, not mail_stack's: the inbox sends where the demo listens
    inbox = email_inbox(
        smtp_host="127.0.0.1", smtp_port=str(port), smtp_security="none", greeting="Hello {name},"
    )
    AssistantInboxFactory(inbox=inbox, assistant__account=inbox.account)
    mail_stack.answers["parcel"] = "Your parcel left our warehouse yesterday."
    mail_stack.answers["invoice"] = "The invoice is attached to your order page."
    out = io.StringIO()

    call_command(
        "helpdesk_email_demo",
        "Where is my parcel?",
        "Thanks! And where is the invoice?",
        helpdesk=web.url,
        inbox=inbox.webhook_token,
        sender="ann@customer.example",
        timeout=90,
        save=str(tmp_path / "mails"),
        stdout=out,
    )

    printed = out.getvalue()
    assert "Your parcel left our warehouse yesterday." in printed
    assert "The invoice is attached to your order page." in printed
    incoming = list(Message.objects.filter(inbox=inbox, message_type=Message.Type.INCOMING).order_by("id"))
    assert [m.content for m in incoming] == ["Where is my parcel?", "Thanks! And where is the invoice?"]
    assert incoming[0].conversation_id == incoming[1].conversation_id  # the quoted answer was cut, too
    assert f"conversation #{incoming[0].conversation_id}" in printed

    def saved(name: str) -> email.message.EmailMessage:
        raw = (tmp_path / "mails" / f"{name}.eml").read_bytes()
        return email.message_from_bytes(raw, policy=email.policy.default)

    first, second = saved("01-answer"), saved("02-answer")
    assert first["To"] == "ann@customer.example"
    assert first["Subject"] == "Re: A question about my order"
    assert first["In-Reply-To"] == incoming[0].provider_message_id
    assert second["In-Reply-To"] == incoming[1].provider_message_id
    assert saved("02-customer")["In-Reply-To"] == first["Message-ID"]
    assert first["Message-ID"] in second["References"]  # one thread in the customer's mail client
    assert second.get_content().startswith("Hello Ann Lee,")
