"""Reading the inboxes whose channel fetches its own messages (an e-mail inbox's IMAP mailbox) on a schedule.

Each message a channel reads is stored like a webhook's (`fit_for_storage`, then `message_ingest`), so one that a
webhook delivered too is stored once: the provider's message id (an e-mail's Message-ID) is the dedup key. The
channel decides what to read and marks it read only after `store` returned; which inboxes poll is each channel's
business (`polls`), so this module names no provider.
"""

from __future__ import annotations

import logging
from typing import Any

from helpdesk.channels.base import InboundMessage, PollResult, PollUnavailable, fit_for_storage
from helpdesk.channels.registry import channel_for
from helpdesk.models import Inbox
from helpdesk.services.messages import message_ingest

logger = logging.getLogger(__name__)


def _poller(inbox: Inbox) -> Any:
    """The inbox's channel when it polls this inbox (an optional capability of a channel: `polls` and `poll`)."""
    channel = channel_for(inbox)
    polls = getattr(channel, "polls", None)
    return channel if polls is not None and polls(inbox) else None


def inbox_poll(*, inbox: Inbox, timeout: float = 30.0) -> PollResult:
    """Store what the inbox's channel reads now; PollUnavailable when it cannot be read, an empty result when
    its channel does not poll it."""
    poller = _poller(inbox)
    if poller is None:
        return PollResult()

    def store(inbound: InboundMessage) -> bool:
        return message_ingest(inbox=inbox, inbound=fit_for_storage(inbound)).created

    result: PollResult = poller.poll(inbox, store=store, timeout=timeout)
    return result


def inboxes_poll_all(*, timeout: float = 30.0) -> int:
    """Poll every inbox whose channel polls it; one that cannot be read is logged and never stops the others.
    Returns how many were read."""
    read = 0
    for inbox in Inbox.objects.order_by("id").iterator():
        if _poller(inbox) is None:
            continue
        try:
            inbox_poll(inbox=inbox, timeout=timeout)
        except PollUnavailable as exc:
            logger.warning("inbox %s not read: %s", inbox.id, exc)
            continue
        read += 1
    return read
