"""Queueing outgoing messages for their channel, and recording what the channel said."""

from __future__ import annotations

from django.db import transaction

from helpdesk.models import Message


def delivery_enqueue(*, message: Message) -> None:
    """Send after commit: a rolled-back reply must never reach the customer."""
    from helpdesk import tasks
    from helpdesk.tracing import inject_context

    message_id = message.id
    carrier = inject_context()
    transaction.on_commit(lambda: tasks.message_deliver.delay(message_id, trace_context=carrier))
