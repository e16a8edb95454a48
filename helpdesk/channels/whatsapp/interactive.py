"""WhatsApp interactive messages for our replies: reply buttons for quick replies and a list for a rating
request, within Meta's documented limits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import rating
from ..provider_http import shorten_text

# Interactive reply buttons (Meta's documented limits).
INTERACTIVE_BODY_LIMIT = 1024
MAX_BUTTONS = 3
BUTTON_TITLE_LIMIT = 20
BUTTON_ID_LIMIT = 256
QUICK_REPLY_ID_PREFIX = "suggestion:"
"""Marks a button id that carries a quick reply's full text; a tap on it comes back as that text."""
QUICK_REPLY_SHORT_BODY = "👇"
"""Body of the buttons' own message when the reply was too long to carry them: no words, so no language."""


def reply_buttons(body: str, quick_replies: Sequence[str]) -> dict[str, Any]:
    """An interactive "button" message: at most 3 reply buttons, each title unique and at most 20 characters
    (a longer question is shortened on the button), its id `suggestion:<the full question>` (at most 256
    characters) so the tap brings the whole question back; `body` must fit `INTERACTIVE_BODY_LIMIT`."""
    buttons: list[dict[str, Any]] = []
    titles: set[str] = set()
    for text in quick_replies:
        button_id = (QUICK_REPLY_ID_PREFIX + text.strip())[:BUTTON_ID_LIMIT]
        title = shorten_text(text.strip(), BUTTON_TITLE_LIMIT)
        # Meta refuses two buttons with the same title: two questions that start alike get numbered.
        number = 2
        while title in titles:
            suffix = f" {number}"
            title = shorten_text(text.strip(), BUTTON_TITLE_LIMIT - len(suffix)) + suffix
            number += 1
        titles.add(title)
        buttons.append({"type": "reply", "reply": {"id": button_id, "title": title}})
        if len(buttons) == MAX_BUTTONS:
            break
    return {"type": "button", "body": {"text": body}, "action": {"buttons": buttons}}


RATING_LIST_BUTTON = "⭐ 1-5"
"""The list's button label (at most 20 characters): no words, so no language."""


def rating_list(body: str) -> dict[str, Any]:
    """An interactive "list" message for a rating request: five rows (⭐ .. ⭐⭐⭐⭐⭐, ids `csat:1`..`csat:5`)
    in one untitled section (a title is needed only with several); `body` must fit `INTERACTIVE_BODY_LIMIT`."""
    return {
        "type": "list",
        "body": {"text": body},
        "action": {
            "button": RATING_LIST_BUTTON,
            "sections": [
                {
                    "rows": [
                        {"id": rating.button_id(choice), "title": rating.stars(choice)}
                        for choice in rating.RATING_CHOICES
                    ]
                }
            ],
        },
    }
