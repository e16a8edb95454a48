"""The satisfaction rating request as every channel sees it (helpdesk.services.csat asks, the channels render).

A rating request is an outgoing message whose quick replies are exactly `RATING_CHOICES` ("1" to "5"). The outbox
hands quick replies to each channel's `send` unchanged, so this list is how a channel knows to draw its native
rating form (Telegram inline buttons, a WhatsApp list, Slack buttons, `csat: true` on the API event) instead of
its follow-up-question buttons. No AI reply can carry it: the AI's follow-up questions are at most three.

A tap on a native rating button comes back as the digit alone ("4"), the same text a customer who types the
number sends, so one reading of the answer (helpdesk.services.csat) serves every channel.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

RATING_CHOICES: tuple[str, ...] = ("1", "2", "3", "4", "5")
CALLBACK_PREFIX = "csat:"
"""Prefix of a native rating button's id or callback data: `csat:4` is a tap on 4."""
STARS = "⭐"


def is_rating_request(quick_replies: Sequence[Any]) -> bool:
    """Whether a message's quick replies ask for a rating (the exact list "1".."5")."""
    return tuple(quick_replies) == RATING_CHOICES


def button_id(choice: str) -> str:
    return f"{CALLBACK_PREFIX}{choice}"


def choice_from_button(value: Any) -> str:
    """The digit a native rating button's id carries ("csat:4" -> "4"); "" for any other id."""
    if isinstance(value, str) and value.startswith(CALLBACK_PREFIX):
        choice = value.removeprefix(CALLBACK_PREFIX)
        if choice in RATING_CHOICES:
            return choice
    return ""


def stars(choice: str) -> str:
    """A button label without words, so it needs no translation: "⭐⭐⭐" for 3."""
    return STARS * int(choice)
