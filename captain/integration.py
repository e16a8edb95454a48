"""The object helpdesk calls (through `HELPDESK["AI_RESPONDER"]`) so that it never imports captain itself."""

from __future__ import annotations

import logging
import time

from django.utils import timezone

from helpdesk.models import Inbox, Message
from helpdesk.tracing import inject_context

from .conf import captain_setting

logger = logging.getLogger(__name__)

# Monotonic time until which this process skips publishing after a failed publish (a per-process circuit
# breaker). Messages are stored either way; the sweeper enqueues the skipped ones once the broker is back.
_broker_down_until = 0.0


class CaptainResponder:
    def handles_inbox(self, inbox: Inbox) -> bool:
        from .models import AssistantInbox

        return AssistantInbox.objects.filter(inbox=inbox).exists()

    def message_received(self, message_id: int) -> None:
        """Called after the customer message is committed. A broker outage must not fail the webhook: the
        message is stored with ai_status pending and the sweeper enqueues it once the broker is back.

        The task starts after the debounce window, so a burst of messages is answered by one run. Only a
        successful publish sets `ai_enqueued_at`; a message without it is swept within seconds.
        """
        from . import tasks

        global _broker_down_until
        if time.monotonic() < _broker_down_until:
            # A publish failed moments ago: do not make this webhook wait for the same timeout again.
            logger.warning("broker marked down; message %s left to the sweeper", message_id)
            return
        countdown = float(captain_setting("DEBOUNCE_SECONDS"))
        try:
            tasks.reply_generate.apply_async(
                (message_id,),
                {"trace_context": inject_context()},
                countdown=countdown if countdown > 0 else None,
            )
        except Exception:  # kombu raises several types for a down broker; all mean "the sweeper will do it"
            _broker_down_until = time.monotonic() + float(captain_setting("BROKER_DOWN_BACKOFF_SECONDS"))
            logger.exception(
                "could not enqueue the AI run for message %s; the sweeper will retry", message_id
            )
            return
        Message.objects.filter(pk=message_id, ai_enqueued_at__isnull=True).update(
            ai_enqueued_at=timezone.now()
        )

    def delivery_failed(self, message: Message) -> None:
        from .services.credits import credit_refund

        credit_refund(message=message)


responder = CaptainResponder()
