"""Polling an e-mail inbox's mailbox (helpdesk.services.polling, EmailChannel.poll over imap.py) against a
real IMAP server (pymap) on 127.0.0.1: unseen mail is stored like a Mailgun delivery and marked seen once stored;
a mail both Mailgun and the mailbox deliver is stored once; an unreadable mail is set aside without stopping the
rest; a wrong password is a clear error that never shows the password."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from pathlib import Path

import pytest

from captain.answering.models import ReplyJob
from helpdesk.channels.base import PollResult, PollUnavailable
from helpdesk.channels.email import imap
from helpdesk.models import Inbox, Message
from helpdesk.services.polling import inbox_poll, inboxes_poll_all
from tests.factories import AssistantInboxFactory
from tests.helpdesk.channels_email.imap_server import PASSWORD, USER, ImapServer, imap_server
from tests.helpdesk.channels_email.support import email_inbox, post, signed_fields
from tests.helpdesk.channels_email.test_mime import fixture
from tests.helpdesk.channels_widget.support import widget_inbox
from tests.support.servers import free_port

pytestmark = pytest.mark.django_db


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ImapServer]:
    with imap_server(tmp_path / "pymap.log") as running:
        yield running


def mailbox_inbox(server: ImapServer, *, password: str = PASSWORD) -> Inbox:
    inbox = email_inbox(
        imap_host="127.0.0.1", imap_port=str(server.port), imap_security="none", imap_username=USER
    )
    inbox.imap_password_set(password)
    inbox.save(update_fields=["imap_password_encrypted"])
    AssistantInboxFactory(inbox=inbox, assistant__account=inbox.account)
    return inbox


def test_unseen_mail_is_stored_for_the_ai_and_marked_seen_once_stored(server):
    inbox = mailbox_inbox(server)
    server.deliver(fixture("gmail_reply"))
    server.deliver(fixture("apple_mail"))

    assert inbox_poll(inbox=inbox) == PollResult(stored=2)

    stored = Message.objects.filter(inbox=inbox).order_by("id")
    assert [m.provider_message_id for m in stored] == [
        "<CAF=k2pT3x7Q+gmail-1@mail.gmail.com>",
        "<5E1B2C3D-APPLE-1@icloud.com>",
    ]
    assert stored[0].content == "Thanks! Can you send it to my office instead?"
    assert ReplyJob.objects.filter(message__inbox=inbox).count() == 2
    assert server.unseen() == []
    assert inbox_poll(inbox=inbox) == PollResult()  # nothing new: nothing stored twice


def test_a_mail_delivered_by_mailgun_and_the_mailbox_is_stored_once(client, server):
    inbox = mailbox_inbox(server)
    assert post(client, inbox, signed_fields(fixture("outlook_html"))).json()["status"] == "accepted"
    server.deliver(fixture("outlook_html"))

    assert inbox_poll(inbox=inbox) == PollResult(duplicates=1)
    assert Message.objects.filter(inbox=inbox).count() == 1
    assert ReplyJob.objects.filter(message__inbox=inbox).count() == 1


def test_an_unreadable_mail_is_set_aside_and_the_next_one_is_stored(server):
    inbox = mailbox_inbox(server)
    server.deliver(b"Subject: nobody\r\nMessage-ID: <nobody-1@x.example>\r\n\r\nno sender here")
    server.deliver(fixture("apple_mail"))

    assert inbox_poll(inbox=inbox) == PollResult(stored=1, refused=1)
    assert list(Message.objects.filter(inbox=inbox).values_list("provider_message_id", flat=True)) == [
        "<5E1B2C3D-APPLE-1@icloud.com>"
    ]
    assert server.unseen() == []  # the unreadable one does not block the next polls (it stays in the mailbox)


def test_a_wrong_password_is_a_clear_error_without_the_password_and_stores_nothing(server, caplog):
    inbox = mailbox_inbox(server, password="wrong-password-123")
    server.deliver(fixture("apple_mail"))

    with pytest.raises(PollUnavailable) as refused:
        inbox_poll(inbox=inbox)

    assert "login failed" in str(refused.value)
    assert "wrong-password-123" not in str(refused.value)
    assert Message.objects.count() == 0
    assert server.unseen() != []  # still there for the next poll with the right password

    assert inboxes_poll_all() == 0  # the sweep logs it and goes on
    assert "wrong-password-123" not in caplog.text


def test_the_sweep_reads_every_configured_mailbox_and_skips_the_others(server):
    inbox = mailbox_inbox(server)
    email_inbox()  # a Mailgun-only e-mail inbox: no IMAP host, not polled
    widget_inbox()  # a channel that never polls
    server.deliver(fixture("apple_mail"))
    assert inboxes_poll_all() == 1
    assert Message.objects.filter(inbox=inbox).count() == 1


def test_the_connection_goes_to_the_address_the_outbound_policy_checked(server, monkeypatch):
    # The host name resolves nowhere: only the address the policy answered can have been connected to.
    inbox = mailbox_inbox(server)
    inbox.provider_config["imap_host"] = "mail.unresolvable.invalid"
    inbox.save(update_fields=["provider_config"])
    asked: list[tuple[str, int]] = []

    def checked(host, port, policy):
        asked.append((host, port))
        return [ipaddress.ip_address("127.0.0.1")]

    monkeypatch.setattr(imap, "checked_addresses", checked)
    server.deliver(fixture("apple_mail"))

    assert inbox_poll(inbox=inbox) == PollResult(stored=1)
    assert asked == [("mail.unresolvable.invalid", server.port)]


def test_a_host_the_outbound_policy_refuses_is_never_contacted(server):
    inbox = mailbox_inbox(server)
    inbox.provider_config["imap_host"] = "169.254.169.254"  # a cloud metadata address
    inbox.save(update_fields=["provider_config"])
    with pytest.raises(PollUnavailable, match="outbound policy"):
        inbox_poll(inbox=inbox)


def test_a_mailbox_that_is_down_does_not_stop_the_sweep_reading_the_others(server):
    down = email_inbox(
        imap_host="127.0.0.1", imap_port=str(free_port()), imap_security="none", imap_username=USER
    )
    with pytest.raises(PollUnavailable, match="connection or login failed"):
        inbox_poll(inbox=down)
    inbox = mailbox_inbox(server)
    server.deliver(fixture("apple_mail"))

    assert inboxes_poll_all() == 1
    assert Message.objects.filter(inbox=inbox).count() == 1
    assert not Message.objects.filter(inbox=down).exists()
