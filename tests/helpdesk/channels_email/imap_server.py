"""A real IMAP server on 127.0.0.1 for the tests: pymap (pure Python, asyncio) with its in-memory backend and one
mailbox user, started as its own process on a free port and stopped by its PID. Debian's dovecot is not on the
test machines; pymap speaks IMAP4rev1 with UIDPLUS and IDLE, enough for what we read."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from imapclient import IMAPClient

from tests.support.servers import free_port, stop_process, wait_for

USER = "help@shop.example"
PASSWORD = "imap-secret"
_USER_ARGS = ["--demo-user", USER, "--demo-password", PASSWORD]


@dataclass
class ImapServer:
    port: int

    def deliver(self, raw: bytes) -> None:
        """Put a mail in the mailbox, as the mail server would on delivery (APPEND, unseen)."""
        with IMAPClient("127.0.0.1", port=self.port, ssl=False, timeout=5) as client:
            client.login(USER, PASSWORD)
            client.append("INBOX", raw)

    def unseen(self) -> list[int]:
        with IMAPClient("127.0.0.1", port=self.port, ssl=False, timeout=5) as client:
            client.login(USER, PASSWORD)
            client.select_folder("INBOX", readonly=True)
            return list(client.search(["UNSEEN"]))


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@contextmanager
def imap_server(log_path: Path) -> Iterator[ImapServer]:
    port = free_port()
    pymap = Path(sys.executable).with_name("pymap")
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [str(pymap), "--host", "127.0.0.1", "--port", str(port), "--no-tls", "dict", *_USER_ARGS],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for(lambda: _accepts(port) or proc.poll() is not None, timeout=30, what="pymap listening")
        if proc.poll() is not None:
            raise RuntimeError(f"pymap exited: {log_path.read_text()[-2000:]}")
        yield ImapServer(port=port)
    finally:
        stop_process(proc)
