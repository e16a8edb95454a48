"""Mail read the moment it arrives, where the mailbox's server offers IMAP IDLE (RFC 2177), as a long-running
watcher per inbox (`manage.py helpdesk_mail_idle`); beat's minute poll (helpdesk.timers.mailboxes_poll) stays the
fallback for every mailbox, IDLE or not, and for any mail a watcher missed.

A watcher keeps one IMAP session open in IDLE; when the server announces new mail it calls `read` (the same poll
the beat runs: read unseen, store, mark seen; a mail both read is stored once by its Message-ID). A server without
IDLE ends the watcher at once (False), leaving that mailbox to the beat; a failed session is retried after
`retry_seconds` until `stop` is set.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..base import PollUnavailable
from .imap import IDLE_SECONDS, Mailbox, idle_offered, idle_wait

if TYPE_CHECKING:
    from helpdesk.models import Inbox

logger = logging.getLogger(__name__)


def watch(
    inbox: Inbox,
    *,
    read: Callable[[], object],
    stop: threading.Event,
    timeout: float = 30.0,
    idle_seconds: float = IDLE_SECONDS,
    retry_seconds: float = 60.0,
) -> bool:
    """Watch `inbox`'s mailbox in IDLE until `stop` is set, calling `read` once at the start and after each
    announcement of new mail. False (at once) when the server does not offer IDLE."""
    while not stop.is_set():
        try:
            with Mailbox(inbox, timeout=timeout) as box:
                if not idle_offered(box):
                    logger.info(
                        "inbox %s: the IMAP server offers no IDLE; the minute poll reads it", inbox.id
                    )
                    return False
                read()  # what arrived while no session watched
                while not stop.is_set():
                    if idle_wait(box, seconds=idle_seconds, stop=stop):
                        read()
        except PollUnavailable as exc:
            logger.warning("inbox %s: IDLE session ended: %s; again in %s s", inbox.id, exc, retry_seconds)
            stop.wait(retry_seconds)
    return True
