"""Reading a message's outbox row (helpdesk.Delivery) in tests, fresh from the database."""

from __future__ import annotations

from helpdesk.models import Delivery, Message


def delivery_of(message: Message) -> Delivery:
    """The message's delivery as stored now (the task and the sweeper write it outside the test's objects)."""
    return Delivery.objects.get(pk=message.pk)
