"""The composer's reply / private note choice, remembered per conversation in the person's session: after a note
the composer stays on "note" for that conversation (it used to fall back to "reply", and the next note went to
the customer unless the agent noticed). Switching is one click or `r` / `n`.

A refused send (a file over the limit, a text too long) keeps what was typed: the view leaves it here for the
page it redirects to, which puts it back in the composer once. It is server-side so it works without JavaScript
(a file input cannot be refilled by the server, so the files are chosen again)."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from helpdesk.models import Conversation, WhatsAppTemplate
from helpdesk.selectors.whatsapp_templates import WindowClosed, approved_templates, whatsapp_window_closed

COMPOSER_KINDS_KEPT = 50
"""How many conversations' reply/note choices a session remembers (the most recent ones)."""

COMPOSER_DRAFTS_KEPT = 5
"""How many refused texts a session holds at once (each is taken by the next page load of its conversation)."""

COMPOSER_DRAFT_MAX_CHARS = 50_000
"""A refused text is kept up to this size: above the 10,000 a message may have, so a text refused for being too
long comes back whole to be shortened, yet the session stays bounded."""


def remember_composer_kind(request: HttpRequest, conversation_id: int, kind: str) -> None:
    """The composer stays on what was last sent in this conversation (note or reply) for this person's session,
    instead of falling back to "reply" after each note."""
    kinds = dict(request.session.get("composer_kinds", {}))
    kinds.pop(str(conversation_id), None)
    kinds[str(conversation_id)] = kind
    request.session["composer_kinds"] = dict(list(kinds.items())[-COMPOSER_KINDS_KEPT:])


def composer_kind(request: HttpRequest, conversation_id: int) -> str:
    kind = request.session.get("composer_kinds", {}).get(str(conversation_id), "reply")
    return "note" if kind == "note" else "reply"


def keep_composer_draft(request: HttpRequest, conversation_id: int, text: str) -> None:
    """Keep a refused send's text for the conversation page the person is sent back to."""
    if not text:
        return
    drafts = dict(request.session.get("composer_drafts", {}))
    drafts.pop(str(conversation_id), None)
    drafts[str(conversation_id)] = text[:COMPOSER_DRAFT_MAX_CHARS]
    request.session["composer_drafts"] = dict(list(drafts.items())[-COMPOSER_DRAFTS_KEPT:])


def take_composer_draft(request: HttpRequest, conversation_id: int) -> str:
    """The text a refused send left for this conversation, once: a later load shows an empty composer again."""
    drafts = request.session.get("composer_drafts")
    if not drafts or str(conversation_id) not in drafts:
        return ""
    drafts = dict(drafts)
    text = drafts.pop(str(conversation_id))
    request.session["composer_drafts"] = drafts
    return str(text)


WINDOW_CLOSED = _(
    "The customer last wrote more than 24 hours ago, so WhatsApp delivers only an approved template now. "
    "Pick a template below; your text is kept."
)


@dataclass(frozen=True)
class WhatsAppComposer:
    """A WhatsApp conversation whose 24-hour window is closed: the composer explains it and offers the inbox's
    approved templates instead of a free text that Meta would refuse (code 131047)."""

    closed: WindowClosed
    templates: list[WhatsAppTemplate]


def whatsapp_composer(conversation: Conversation) -> WhatsAppComposer | None:
    closed = whatsapp_window_closed(conversation=conversation)
    if closed is None:
        return None
    return WhatsAppComposer(closed=closed, templates=list(approved_templates(inbox_id=conversation.inbox_id)))
