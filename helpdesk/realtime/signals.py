"""Model signals that publish dashboard events for every save of a conversation or a new message, whichever
service or task made it (ingest, AI replies, notes, activities, CSAT, admin edits). Writes that bypass signals
(`QuerySet.update()`: assignment, priority, delivery status) call helpdesk.realtime.events themselves.
Connected in HelpdeskConfig.ready()."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import m2m_changed, post_save
from django.dispatch import receiver

from helpdesk.models import Conversation, Message

from .events import conversation_changed, message_added


@receiver(post_save, sender=Conversation, dispatch_uid="helpdesk-realtime-conversation")
def _conversation_saved(sender: type, instance: Conversation, created: bool, **kwargs: Any) -> None:
    if kwargs.get("raw"):  # loaddata
        return
    conversation_changed(instance, change="created" if created else "updated")


@receiver(post_save, sender=Message, dispatch_uid="helpdesk-realtime-message")
def _message_saved(sender: type, instance: Message, created: bool, **kwargs: Any) -> None:
    if created and not kwargs.get("raw"):
        message_added(instance)


@receiver(m2m_changed, sender=Conversation.labels.through, dispatch_uid="helpdesk-realtime-labels")
def _labels_changed(sender: type, instance: Any, action: str, reverse: bool, **kwargs: Any) -> None:
    if (
        action in {"post_add", "post_remove", "post_clear"}
        and not reverse
        and isinstance(instance, Conversation)
    ):
        conversation_changed(instance, change="labels")
