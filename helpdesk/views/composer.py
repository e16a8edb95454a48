"""The composer's reply / private note choice, remembered per conversation in the person's session: after a note
the composer stays on "note" for that conversation (it used to fall back to "reply", and the next note went to
the customer unless the agent noticed). Switching is one click or `r` / `n`."""

from __future__ import annotations

from django.http import HttpRequest

COMPOSER_KINDS_KEPT = 50
"""How many conversations' reply/note choices a session remembers (the most recent ones)."""


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
