"""IMAP IDLE (helpdesk.channels.email.idle) against a real IMAP server that offers it (pymap on 127.0.0.1): a
watcher reads what is waiting when it starts, then new mail the moment the server announces it (no beat tick), and
stops when told; a server without IDLE leaves the mailbox to the minute poll; a session that fails is retried."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpdesk.channels.email import idle, imap
from helpdesk.models import Message
from helpdesk.services.polling import inbox_poll
from tests.helpdesk.channels_email.imap_server import PASSWORD, USER, ImapServer, imap_server
from tests.helpdesk.channels_email.support import email_inbox
from tests.helpdesk.channels_email.test_mime import fixture
from tests.support.servers import free_port, wait_for


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ImapServer]:
    with imap_server(tmp_path / "pymap.log") as running:
        yield running


def mailbox_inbox(port: int):
    inbox = email_inbox(imap_host="127.0.0.1", imap_port=str(port), imap_security="none", imap_username=USER)
    inbox.imap_password_set(PASSWORD)
    inbox.save()
    return inbox


class Watcher:
    """idle.watch in a thread, stopped (and joined) by the test."""

    def __init__(self, inbox, read, **options) -> None:
        self.stop = threading.Event()
        self.result: list[bool] = []
        self.thread = threading.Thread(
            target=lambda: self.result.append(idle.watch(inbox, read=read, stop=self.stop, **options)),
            daemon=True,
        )

    def __enter__(self) -> Watcher:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=10)
        assert not self.thread.is_alive()


@pytest.mark.django_db(transaction=True)  # the watcher's thread stores through its own database connection
def test_new_mail_is_stored_within_seconds_of_arriving_without_a_beat_tick(server):
    inbox = mailbox_inbox(server.port)
    server.deliver(fixture("gmail_reply"))  # waiting before the watcher starts
    reads: list[float] = []

    def read() -> None:
        inbox_poll(inbox=inbox)
        reads.append(time.monotonic())

    with Watcher(inbox, read) as watcher:
        wait_for(lambda: len(reads) == 1, timeout=10, what="the first read")
        assert Message.objects.filter(inbox=inbox).count() == 1
        time.sleep(0.5)  # the watcher is in IDLE now
        delivered = time.monotonic()
        server.deliver(fixture("apple_mail"))
        wait_for(lambda: Message.objects.filter(inbox=inbox).count() == 2, timeout=10, what="the IDLE read")
        waited = reads[-1] - delivered
    assert watcher.result == [True]
    assert waited < 5, waited  # the beat would take up to 60 s
    assert server.unseen() == []


@pytest.mark.django_db
def test_a_server_without_idle_leaves_the_mailbox_to_the_minute_poll(server, monkeypatch):
    inbox = mailbox_inbox(server.port)
    monkeypatch.setattr(idle, "idle_offered", lambda box: False)
    reads: list[int] = []
    assert idle.watch(inbox, read=lambda: reads.append(1), stop=threading.Event()) is False
    assert reads == []


@pytest.mark.django_db
def test_a_session_that_fails_is_retried_and_the_watcher_stops_when_told(server):
    inbox = mailbox_inbox(free_port())  # nobody listens there
    with Watcher(inbox, lambda: None, retry_seconds=0.2) as watcher:
        time.sleep(0.6)
        assert watcher.thread.is_alive()  # still trying, not crashed
    assert watcher.result == [True]


@pytest.mark.django_db
def test_idle_wait_returns_quietly_when_nothing_arrives(server):
    inbox = mailbox_inbox(server.port)
    with imap.Mailbox(inbox, timeout=5) as box:
        assert imap.idle_offered(box)
        started = time.monotonic()
        assert imap.idle_wait(box, seconds=1.5) is False
        assert 1.0 < time.monotonic() - started < 4
        assert box.unseen(10) == ([], [])  # the session still works after IDLE
