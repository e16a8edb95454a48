"""Reading an e-mail inbox's mailbox over IMAP (imapclient), for inbound mail without a Mailgun route.

Settings (`provider_config`): `imap_host`, `imap_port` (default 993 for "ssl", else 143), `imap_security`
("ssl", the default; "starttls"; or "none" for a server on a private network), `imap_username` (empty: the
SMTP username) and `imap_folder` (default INBOX). The password is the inbox's IMAP password, or its SMTP password
when none is set (most providers have one password per mailbox): encrypted at rest (helpdesk.crypto), write-only,
decrypted only to log in, so it never sits in provider_config, the admin's readable fields or a log line.

What is read: unseen mail, fetched with BODY.PEEK[] so that reading it does not mark it seen. A mail is marked
seen only once it is stored (EmailChannel.poll): a crash in between fetches it again, and the
Message-ID (the dedup key) stores it once. The host is checked by the outbound policy like every address the
helpdesk reaches for a tenant, and the connection is made to the address it checked.
"""

from __future__ import annotations

import contextlib
import imaplib
import socket
import ssl
import threading
import time
from collections.abc import Iterable
from types import TracebackType
from typing import TYPE_CHECKING, Any

from imapclient import IMAPClient, imap4, tls

from helpdesk.crypto import SecretUnreadable
from helpdesk.outbound import OutboundRefused
from helpdesk.outbound.policy import OutboundPolicy, checked_addresses

from ..base import PollUnavailable

if TYPE_CHECKING:
    from helpdesk.models import Inbox

MAX_MAIL_BYTES = 25 * 1024 * 1024  # a bigger mail is left in the mailbox and reported, never half-read


def configured(inbox: Inbox) -> bool:
    config = inbox.provider_config if isinstance(inbox.provider_config, dict) else {}
    return bool(config.get("imap_host"))


class _PinnedTLS(tls.IMAP4_TLS):
    """IMAP over TLS to the address the outbound policy checked, with the certificate checked for the host name."""

    def __init__(
        self, host: str, port: int, context: ssl.SSLContext, timeout: float | None, address: str
    ) -> None:
        self._pinned = address
        super().__init__(host, port, context, timeout)

    def _create_socket(self, timeout: float | None = None) -> socket.socket:
        sock = socket.create_connection(
            (self._pinned, self.port), self._timeout if timeout is None else timeout
        )
        wrapped: socket.socket = tls.wrap_socket(sock, self.ssl_context, self.host)
        return wrapped


class _PinnedPlain(imap4.IMAP4WithTimeout):
    """Plain IMAP (then maybe STARTTLS, checked for the host name) to the address the policy checked."""

    def __init__(self, host: str, port: int, timeout: float | None, address: str) -> None:
        self._pinned = address
        super().__init__(host, port, timeout)

    def _create_socket(self, timeout: float | None = None) -> socket.socket:
        return socket.create_connection(
            (self._pinned, self.port), self._timeout if timeout is None else timeout
        )


class _PinnedClient(IMAPClient):
    """An IMAPClient that connects to the checked address, so a second DNS answer cannot move the connection
    (as helpdesk.channels.email.smtp does for SMTP)."""

    def __init__(self, host: str, *, address: str, **options: Any) -> None:
        self._address = address
        super().__init__(host, **options)

    def _create_IMAP4(self) -> imaplib.IMAP4:  # imapclient's hook: the one place it makes the connection
        timeout = getattr(self._timeout, "connect", None)
        if self.ssl:
            return _PinnedTLS(self.host, self.port, self.ssl_context, timeout, self._address)
        return _PinnedPlain(self.host, self.port, timeout, self._address)


class Mailbox:
    """One IMAP session on an inbox's mailbox: `with Mailbox(inbox, timeout=30) as box: box.unseen(50)`."""

    def __init__(self, inbox: Inbox, *, timeout: float) -> None:
        config = inbox.provider_config if isinstance(inbox.provider_config, dict) else {}
        self.host = str(config.get("imap_host") or "")
        self.security = str(config.get("imap_security") or "ssl")
        self.port = int(str(config.get("imap_port") or (993 if self.security == "ssl" else 143)))
        self.username = str(config.get("imap_username") or config.get("smtp_username") or "")
        self.folder = str(config.get("imap_folder") or "INBOX")
        self._inbox = inbox
        self._timeout = timeout
        self._client: IMAPClient | None = None

    def __enter__(self) -> Mailbox:
        if not self.host or not self.username:
            raise PollUnavailable("The inbox has no IMAP host or username.")
        try:
            address = str(checked_addresses(self.host, self.port, OutboundPolicy.from_settings())[0])
        except OutboundRefused as exc:
            raise PollUnavailable(f"IMAP host refused by the outbound policy: {exc}") from None
        try:
            password = self._inbox.imap_password()
        except SecretUnreadable:
            raise PollUnavailable(
                "The inbox's IMAP password cannot be decrypted with the configured keys (HELPDESK_SECRETS_KEYS): "
                "put the key it was stored with back, or set the password again."
            ) from None
        context = ssl.create_default_context()
        try:
            client = _PinnedClient(
                self.host,
                address=address,
                port=self.port,
                ssl=self.security == "ssl",
                ssl_context=context,
                timeout=self._timeout,
            )
            if self.security == "starttls":
                client.starttls(context)
            client.login(self.username, password)
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

    def _client_or_fail(self) -> IMAPClient:
        if self._client is None:
            raise PollUnavailable("The mailbox is not open.")
        return self._client

    def unseen(self, limit: int) -> tuple[list[int], list[int]]:
        """The uids of up to `limit` unseen mails, oldest first: (those to read, those too big to read)."""
        client = self._client_or_fail()
        try:
            uids = sorted(client.search(["UNSEEN"]))[:limit]
            sizes = client.fetch(uids, ["RFC822.SIZE"]) if uids else {}
        except (OSError, IMAPClient.Error) as exc:
            raise PollUnavailable(f"IMAP search failed ({type(exc).__name__})") from None
        small = [uid for uid in uids if int(sizes.get(uid, {}).get(b"RFC822.SIZE", 0)) <= MAX_MAIL_BYTES]
        return small, [uid for uid in uids if uid not in small]

    def read(self, uid: int) -> bytes | None:
        """One mail's bytes, without marking it seen (one at a time: memory holds one mail, not fifty);
        None when the server no longer has it."""
        client = self._client_or_fail()
        try:
            fetched = client.fetch([uid], ["BODY.PEEK[]"])
        except (OSError, IMAPClient.Error) as exc:
            raise PollUnavailable(f"IMAP fetch failed ({type(exc).__name__})") from None
        raw = fetched.get(uid, {}).get(b"BODY[]")
        return bytes(raw) if isinstance(raw, bytes) else None

    def mark_seen(self, uids: Iterable[int]) -> None:
        client = self._client_or_fail()
        done = list(uids)
        try:
            if done:
                client.add_flags(done, [b"\\Seen"])
        except (OSError, IMAPClient.Error) as exc:
            # Not marked: read again next poll, and stored once by its Message-ID.
            raise PollUnavailable(f"IMAP flag update failed ({type(exc).__name__})") from None


IDLE_SECONDS = 29 * 60
"""Longest one IDLE command waits before it is renewed: RFC 2177 lets a server drop a client idle for 30 minutes."""


def idle_offered(box: Mailbox) -> bool:
    client = box._client_or_fail()
    try:
        return bool(client.has_capability("IDLE"))
    except (OSError, IMAPClient.Error) as exc:
        raise PollUnavailable(f"IMAP capability check failed ({type(exc).__name__})") from None


def _announces_mail(responses: Iterable[Any]) -> bool:
    return any(
        isinstance(item, tuple) and len(item) > 1 and item[1] in (b"EXISTS", b"RECENT") for item in responses
    )


def idle_wait(box: Mailbox, *, seconds: float, stop: threading.Event | None = None) -> bool:
    """Wait up to `seconds` in one IDLE command on the open mailbox (looking at `stop` every second); True when
    the server announced new mail (EXISTS or RECENT), False when the time ran out quietly or `stop` was set. Any
    IMAP failure is PollUnavailable, as for a poll.

    A NOOP first: a server tells a session about mail that arrived since its last command at the end of the next
    one, and IDLE's end may be 29 minutes away (pymap holds it until then; RFC 2177 lets any server do so). Mail
    announced only when IDLE ends counts too."""
    client = box._client_or_fail()
    deadline = time.monotonic() + seconds
    try:
        _, pending = client.noop()
        if _announces_mail(pending):
            return True
        announced = False
        client.idle()
        try:
            while not announced and time.monotonic() < deadline and not (stop is not None and stop.is_set()):
                responses = client.idle_check(timeout=max(0.0, min(1.0, deadline - time.monotonic())))
                announced = _announces_mail(responses)
        finally:
            _, at_end = client.idle_done()
    except (OSError, IMAPClient.Error) as exc:
        raise PollUnavailable(f"IMAP IDLE failed ({type(exc).__name__})") from None
    return announced or _announces_mail(at_end)
