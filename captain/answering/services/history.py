"""The conversation as the model reads it on a reply run: the last public messages as chat turns, ending with
the run's batch of customer messages (files rendered for the model when it can see them)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from django.db.models import Q

from captain.answering.services.jobs import jobs_pending_ids_query
from captain.answering.services.media_content import media_contents
from captain.conf import captain_setting
from helpdesk.models import Conversation, Message
from helpdesk.services.attachments import attachments_ready


def _pending_outside(batch_ids: Collection[int]) -> Q:
    """Customer messages still waiting for the AI that this run did not take. A message that arrives after the
    run took its batch has its own task and gets its own run afterwards, so it must not appear in this run's
    history either: otherwise it would be answered twice (once merged into this answer, once by its own run)."""
    return Q(pk__in=jobs_pending_ids_query()) & ~Q(pk__in=list(batch_ids))


def chat_history(
    conversation: Conversation, *, batch_ids: Collection[int], sees_images: bool | None = None
) -> list[dict[str, Any]]:
    """The last public messages as chat turns (customer -> user, AI and people -> assistant), ending with the
    customer messages of this run's batch; pending messages outside the batch are left to their own runs.

    `sees_images`: whether the run's model can see images (`Endpoint.sees_images`). True or False first fetches
    the batch's files still pending (`attachments_ready`, at most `MEDIA_WAIT_SECONDS`), then renders the
    messages that carried files (captain.answering.services.media_content): True gives this turn's images as
    `image_url` parts (the message's content is then a content list), False a statement that the model cannot
    see them; voice notes become their transcript or a statement either way. None keeps the stored text only.
    """
    if sees_images is not None:
        attachments_ready(message_ids=batch_ids, timeout=float(captain_setting("MEDIA_WAIT_SECONDS")))
    limit = captain_setting("HISTORY_MESSAGES")
    rows = list(
        Message.objects.filter(conversation=conversation, private=False)
        .exclude(message_type=Message.Type.ACTIVITY)
        # Canned system texts (the inbox greeting) are not the AI's words; keeping them would end the history on
        # an assistant turn before the customer's question is answered.
        .exclude(sender_type=Message.SenderType.SYSTEM)
        .exclude(_pending_outside(batch_ids))
        # Provider order is the order we stored them in: one conversation's webhooks commit in arrival order.
        .order_by("-created_at", "-id")
        .values_list("pk", "message_type", "content", "attachments")[:limit]
    )
    rows.reverse()
    media: dict[int, Any] = {}
    if sees_images is not None:
        with_files = [
            (pk, content)
            for pk, kind, content, reported in rows
            if kind == Message.Type.INCOMING and reported
        ]
        if with_files:
            media = media_contents(with_files, sees_images=sees_images, batch_ids=batch_ids)
    history = [
        {"role": "user" if kind == Message.Type.INCOMING else "assistant", "content": media.get(pk, content)}
        for pk, kind, content, _reported in rows
        if content or pk in media
    ]
    # A window that starts with our own reply confuses small models; start at a customer turn.
    while history and history[0]["role"] != "user":
        history.pop(0)
    return history
