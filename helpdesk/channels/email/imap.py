"""Reading an e-mail inbox's mailbox over IMAP (imapclient), for inbound mail without a Mailgun route.

Settings (`provider_config`): `imap_host`, `imap_port` (default 993 for "ssl", else 143), `imap_security`
("ssl", the default; "starttls"; or "none" for a server on a private network), `imap_username` (empty: the
SMTP username) and `imap_folder` (default INBOX). The password is the inbox's access token, the same write-only
secret the SMTP login uses (most providers have one password per mailbox), so it never sits in provider_config,
the admin's readable fields or a log line.

What is read: unseen mail, fetched with BODY.PEEK[] so that reading it does not mark it seen. A mail is marked
seen only once it is stored (EmailChannel.poll): a crash in between fetches it again, and the
Message-ID (the dedup key) stores it once. The host is checked by the outbound policy like every address the
helpdesk reaches for a tenant.
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING

from imapclient import IMAPClient

from helpdesk.outbound import OutboundRefused
from helpdesk.outbound.policy import OutboundPolicy, checked_addresses

from ..base import PollUnavailable

if TYPE_CHECKING:
    from helpdesk.models import Inbox

MAX_MAIL_BYTES = 25 * 1024 * 1024  # a bigger mail is left in the mailbox and reported, never half-read


@dataclass(frozen=True)
class Fetched:
    uid: int
    raw: bytes


def configured(inbox: Inbox) -> bool:
    config = inbox.provider_config if isinstance(inbox.provider_config, dict) else {}
    return bool(config.get("imap_host"))


class Mailbox:
    """One IMAP session on an inbox's mailbox: `with Mailbox(inbox, timeout=30) as box: box.unseen(50)`."""

    def __init__(self, inbox: Inbox, *, timeout: float) -> None:
        config = inbox.provider_config if isinstance(inbox.provider_config, dict) else {}
        self.host = str(config.get("imap_host") or "")
        self.security = str(config.get("imap_security") or "ssl")
        self.port = int(str(config.get("imap_port") or (993 if self.security == "ssl" else 143)))
        self.username = str(config.get("imap_username") or config.get("smtp_username") or "")
        self.folder = str(config.get("imap_folder") or "INBOX")
        self._password = inbox.access_token
        self._timeout = timeout
        self._client: IMAPClient | None = None

    def __enter__(self) -> Mailbox:
        if not self.host or not self.username:
            raise PollUnavailable("The inbox has no IMAP host or username.")
        try:
            checked_addresses(self.host, self.port, OutboundPolicy.from_settings())
        except OutboundRefused as exc:
            raise PollUnavailable(f"IMAP host refused by the outbound policy: {exc}") from None
        context = ssl.create_default_context()
        try:
            client = IMAPClient(
                self.host,
                port=self.port,
                ssl=self.security == "ssl",
                ssl_context=context,
                timeout=self._timeout,
            )
            if self.security == "starttls":
                client.starttls(context)
            client.login(self.username, self._password)
            client.select_folder(self.folder)
        except (OSError, IMAPClient.Error) as exc:
            # The exception's text may quote the server's answer to our login; only its kind is kept.
            raise PollUnavailable(f"IMAP connection or login failed ({type(exc).__name__})") from None
        self._client = client
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._client is not None:
            # The server may have gone away first: then there is nothing left to close.
            with contextlib.suppress(OSError, IMAPClient.Error):
                self._client.logout()
            self._client = None

    def unseen(self, limit: int) -> tuple[list[Fetched], list[int]]:
        """Up to `limit` unseen mails, oldest first, and the uids of those too big to read."""
        assert self._client is not None
        uids = sorted(self._client.search(["UNSEEN"]))[:limit]
        if not uids:
            return [], []
        sizes = self._client.fetch(uids, ["RFC822.SIZE"])
        small = [uid for uid in uids if int(sizes.get(uid, {}).get(b"RFC822.SIZE", 0)) <= MAX_MAIL_BYTES]
        too_big = [uid for uid in uids if uid not in small]
        fetched = self._client.fetch(small, ["BODY.PEEK[]"]) if small else {}
        mails = [
            Fetched(uid=uid, raw=bytes(fetched[uid][b"BODY[]"]))
            for uid in small
            if uid in fetched and isinstance(fetched[uid].get(b"BODY[]"), bytes)
        ]
        return mails, too_big

    def mark_seen(self, uids: Iterable[int]) -> None:
        assert self._client is not None
        done = list(uids)
        if done:
            self._client.add_flags(done, [b"\\Seen"])
