"""IMAP IDLE (helpdesk.channels.email.idle, manage.py helpdesk_mail_idle) against a real IMAP server that offers it (pymap on 127.0.0.1): a
watcher reads what is waiting when it starts, then new mail the moment the server announces it (no beat tick), and
stops when told; a server without IDLE leaves the mailbox to the minute poll; a session that fails is retried."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
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
from tests.support.database import database_url_for_subprocess
from tests.support.servers import ROOT, free_port, stop_process, wait_for


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


@pytest.mark.django_db
def test_mail_that_arrived_before_idle_began_is_announced_at_once(server):
    # Between a session's last command and its IDLE (the watcher's read runs on another session), pymap, like any
    # server may, holds the announcement until the session's next command ends: IDLE's end, 29 minutes later.
    inbox = mailbox_inbox(server.port)
    with imap.Mailbox(inbox, timeout=5) as box:
        assert box.unseen(10) == ([], [])
        server.deliver(fixture("apple_mail"))
        started = time.monotonic()
        assert imap.idle_wait(box, seconds=20) is True
        assert time.monotonic() - started < 2


@pytest.mark.django_db(transaction=True)
def test_the_idle_command_stores_new_mail_as_it_arrives_and_stops_on_sigterm(server, redis_url, tmp_path):
    inbox = mailbox_inbox(server.port)
    log_path = tmp_path / "idle.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            # --renew-seconds: a mail delivered in the instant between the watcher's NOOP and its IDLE is announced
            # by pymap only when that IDLE ends (see imap.idle_wait); the test's delivery can fall there.
            [
                sys.executable,
                "manage.py",
                "helpdesk_mail_idle",
                "--inbox",
                str(inbox.id),
                "--renew-seconds",
                "3",
            ],
            cwd=ROOT,
            env={**os.environ, "DATABASE_URL": database_url_for_subprocess(), "REDIS_URL": redis_url},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for(lambda: "Watching 1 mailbox" in log_path.read_text(), timeout=30, what="the command started")
        time.sleep(1.0)  # its first read done, in IDLE now
        server.deliver(fixture("outlook_html"))
        wait_for(
            lambda: Message.objects.filter(inbox=inbox).exists(),
            timeout=10,
            what=f"the mail stored by the command; its log:\n{log_path.read_text()}",
        )
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
    finally:
        stop_process(proc)
    assert server.unseen() == []
