"""Slack Block Kit for our replies: quick-reply buttons and rating buttons under the text, and the ids their taps
carry back (helpdesk.channels.slack.webhook turns a tap into a message)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import rating
from ..provider_http import shorten_text, split_text

# Block Kit limits for a reply with quick-reply buttons.
SECTION_TEXT_LIMIT = 3000
BUTTON_TEXT_LIMIT = 75
BUTTON_VALUE_LIMIT = 2000
MAX_ACTION_ELEMENTS = 25
QUICK_REPLY_BLOCK_ID = "quick_replies"
QUICK_REPLY_ACTION_PREFIX = "quick_reply_"
"""`action_id` of our quick-reply buttons (`quick_reply_0`, `quick_reply_1`...): only their taps are messages."""
RATING_BLOCK_ID = "csat"
RATING_ACTION_PREFIX = "csat_"
"""`action_id` of our rating buttons (`csat_1`..`csat_5`); their taps are messages too (the digit)."""


def quick_reply_blocks(text: str, quick_replies: Sequence[str]) -> list[dict[str, Any]]:
    """The reply as section blocks (each at most 3000 characters) followed by an actions block with one button per
    quick reply: text at most 75 characters (shortened when longer), the full question in `value` (at most 2000),
    a unique `action_id` per button."""
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": part}}
        for part in split_text(text, SECTION_TEXT_LIMIT)
        if part.strip()
    ]
    buttons = [
        {
            "type": "button",
            "text": {"type": "plain_text", "text": shorten_text(question, BUTTON_TEXT_LIMIT), "emoji": True},
            "value": question[:BUTTON_VALUE_LIMIT],
            "action_id": f"{QUICK_REPLY_ACTION_PREFIX}{index}",
        }
        for index, question in enumerate(quick_replies[:MAX_ACTION_ELEMENTS])
    ]
    blocks.append({"type": "actions", "block_id": QUICK_REPLY_BLOCK_ID, "elements": buttons})
    return blocks


def rating_blocks(text: str) -> list[dict[str, Any]]:
    """A rating request: the question as section blocks and one actions block of five buttons
    (⭐ .. ⭐⭐⭐⭐⭐, `action_id` `csat_<n>`, `value` the digit)."""
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": part}}
        for part in split_text(text, SECTION_TEXT_LIMIT)
        if part.strip()
    ]
    buttons = [
        {
            "type": "button",
            "text": {"type": "plain_text", "text": rating.stars(choice), "emoji": True},
            "value": choice,
            "action_id": f"{RATING_ACTION_PREFIX}{choice}",
        }
        for choice in rating.RATING_CHOICES
    ]
    blocks.append({"type": "actions", "block_id": RATING_BLOCK_ID, "elements": buttons})
    return blocks
