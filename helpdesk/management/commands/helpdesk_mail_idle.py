"""Read e-mail inboxes' mailboxes the moment mail arrives, with IMAP IDLE where the server offers it
(helpdesk.channels.email.idle): one watcher thread per inbox with an IMAP mailbox, until Ctrl+C or SIGTERM.

Optional: beat's minute poll reads every mailbox anyway (the fallback for servers without IDLE and for a watcher
that is down); this only shortens the wait from up to a minute to about a second.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import close_old_connections, connections

from helpdesk.channels.email import idle, imap
from helpdesk.models import Inbox
from helpdesk.services.polling import inbox_poll


def _watch(inbox: Inbox, stop: threading.Event, renew_seconds: float) -> None:
    def read() -> object:
        close_old_connections()  # a long-lived thread: never a connection the database has dropped
        return inbox_poll(inbox=inbox)

    try:
        idle.watch(inbox, read=read, stop=stop, idle_seconds=renew_seconds)
    finally:
        connections.close_all()


class Command(BaseCommand):
    help = "Watch e-mail inboxes' IMAP mailboxes with IDLE and read new mail as it arrives."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--inbox", type=int, action="append", help="Only this inbox id (repeatable).")
        parser.add_argument(
            "--renew-seconds",
            type=float,
            default=imap.IDLE_SECONDS,
            help=(
                "End and renew each IDLE after this many seconds (default 29 minutes, RFC 2177's limit). Lower it "
                "where a NAT or firewall drops quiet connections sooner; a renewal also reads mail a server "
                "announced only at IDLE's end."
            ),
        )

    def handle(
        self,
        *args: Any,
        inbox: list[int] | None = None,
        renew_seconds: float = imap.IDLE_SECONDS,
        **options: Any,
    ) -> None:
        inboxes = [
            found
            for found in Inbox.objects.filter(channel_type=Inbox.ChannelType.EMAIL).order_by("id")
            if imap.configured(found) and (not inbox or found.id in inbox)
        ]
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        threads = [
            threading.Thread(
                target=_watch, args=(found, stop, renew_seconds), name=f"idle-{found.id}", daemon=True
            )
            for found in inboxes
        ]
        for thread in threads:
            thread.start()
        self.stdout.write(f"Watching {len(threads)} mailbox(es) with IDLE (Ctrl+C stops).")
        try:
            while any(thread.is_alive() for thread in threads) and not stop.is_set():
                stop.wait(1.0)
        except KeyboardInterrupt:
            pass
        stop.set()
        for thread in threads:
            thread.join(timeout=5)
