"""The demo's e-mail inbox and `manage.py helpdesk_email_demo`'s refusals (the whole demo with a worker and the
web server: tests/e2e/test_email_demo_e2e.py)."""

from __future__ import annotations

import socket

import pytest
from django.core.management import CommandError, call_command

from captain.assistants.models import AssistantInbox
from helpdesk.management.commands.helpdesk_email_demo import MailSink, customer_mail
from helpdesk.models import Inbox
from tests.helpdesk.channels_email.support import email_inbox
from tests.support.servers import free_port

pytestmark = pytest.mark.django_db


def test_the_demo_seed_adds_an_email_inbox_sending_through_the_local_sink(settings):
    settings.DEBUG = True
    call_command("captain_demo_seed")
    call_command("captain_demo_seed")  # safe to run again

    (inbox,) = Inbox.objects.filter(channel_type=Inbox.ChannelType.EMAIL)
    config = inbox.provider_config
    assert (config["smtp_host"], config["smtp_port"], config["smtp_security"]) == (
        "127.0.0.1",
        "8025",
        "none",
    )
    assert config["from_address"] == "support@acme-shop.example"
    assert AssistantInbox.objects.filter(inbox=inbox).exists()


def test_the_demo_command_needs_an_email_inbox_sending_through_this_machine():
    with pytest.raises(CommandError, match=r"No e-mail inbox sending through 127\.0\.0\.1"):
        call_command("helpdesk_email_demo", "Hello?")
    elsewhere = email_inbox(smtp_host="smtp.shop.example")
    with pytest.raises(CommandError, match=r"does not send through 127\.0\.0\.1"):
        call_command("helpdesk_email_demo", "Hello?", inbox=elsewhere.webhook_token)


def test_the_demo_command_says_when_the_helpdesk_is_not_running():
    inbox = email_inbox(smtp_host="127.0.0.1", smtp_port=str(free_port()), smtp_security="none")
    with pytest.raises(CommandError, match="does not answer"):
        call_command(
            "helpdesk_email_demo",
            "Hello?",
            helpdesk=f"http://127.0.0.1:{free_port()}",
            inbox=inbox.webhook_token,
        )


def test_a_taken_sink_port_is_a_clear_error():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(CommandError, match=r"cannot listen on 127\.0\.0\.1"):
            MailSink(taken.getsockname()[1]).start()


def test_a_reply_quotes_the_answer_and_names_it_as_a_mail_client_does():
    answer = customer_mail(
        sender="support@shop.example", name="Shop", to="ann@customer.example", subject="Hi", text="Yes."
    )
    reply = customer_mail(
        sender="ann@customer.example",
        name="Ann",
        to="support@shop.example",
        subject="x",
        text="Thanks",
        answering=answer,
    )
    assert reply["Subject"] == "Re: Hi"
    assert reply["In-Reply-To"] == answer["Message-ID"]
    assert reply["References"] == answer["Message-ID"]
    assert "> Yes." in reply.get_content()
