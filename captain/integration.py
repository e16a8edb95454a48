"""The object helpdesk calls (through `HELPDESK["AI_RESPONDER"]`) so that it never imports captain itself."""

from __future__ import annotations

import logging

from helpdesk.models import Inbox, Message
from helpdesk.tracing import inject_context

logger = logging.getLogger(__name__)


class CaptainResponder:
    def handles_inbox(self, inbox: Inbox) -> bool:
        from .models import AssistantInbox

        return AssistantInbox.objects.filter(inbox=inbox).exists()

    def message_received(self, message_id: int) -> None:
        """Called after the customer message is committed. A broker outage must not fail the webhook: the
        message is stored with ai_status pending and the sweeper enqueues it once the broker is back."""
        from . import tasks

        try:
            tasks.reply_generate.delay(message_id, trace_context=inject_context())
        except Exception:  # kombu raises several types for a down broker; all mean "the sweeper will do it"
            logger.exception(
                "could not enqueue the AI run for message %s; the sweeper will retry", message_id
            )

    def delivery_failed(self, message: Message) -> None:
        from .services.credits import credit_refund

        credit_refund(message=message)


responder = CaptainResponder()
