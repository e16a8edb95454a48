"""What the conversation page borrows from the AI responder (captain, when installed): the knowledge an AI
reply cited, the debug log link, the re-route form and the copilot. Helpdesk only looks the hooks up by name
(helpdesk.conf.ai_responder), so without an AI responder the page simply shows none of them."""

from __future__ import annotations

from django.urls import NoReverseMatch, reverse

from helpdesk.conf import ai_responder
from helpdesk.models import Conversation, Membership, Message


def with_cited_sources(messages: list[Message]) -> list[Message]:
    """AI replies get `cited_sources`: the knowledge they used, as the AI responder recorded it (the helpdesk
    knows nothing of knowledge; a responder without `reply_sources` shows none)."""
    responder = ai_responder()
    lookup = getattr(responder, "reply_sources", None)
    ids = [m.pk for m in messages if m.sender_type == Message.SenderType.ASSISTANT]
    found = lookup(message_ids=ids) if lookup and ids else {}
    for message in messages:
        message.cited_sources = found.get(message.pk, [])  # type: ignore[attr-defined]  # for the template only, not a field
    return messages


def debug_log_url(account_id: int, conversation_id: int) -> str | None:
    """The AI debug log of this conversation, when the AI app (captain) is installed; helpdesk only knows the
    URL name, never the app."""
    try:
        return reverse("captain-dashboard:conversation-runs", args=[account_id, conversation_id])
    except NoReverseMatch:
        return None


def reroute_form(conversation: Conversation) -> dict[str, object] | None:
    """The AI responder's "This should have gone to ..." form (where to post, the nodes, the message it routed
    last) for a conversation the AI handles or people took from it; None without one."""
    if conversation.status not in (Conversation.Status.PENDING, Conversation.Status.OPEN):
        return None
    build = getattr(ai_responder(), "reroute_form", None)
    return build(conversation=conversation) if build else None


def copilot_panel(conversation: Conversation, membership: Membership) -> dict[str, object] | None:
    """The AI responder's copilot for this conversation (its template and the URLs it posts to); None without
    one. The composer includes `copilot.template` next to the reply box."""
    build = getattr(ai_responder(), "copilot_panel", None)
    return build(conversation=conversation, membership=membership) if build else None
