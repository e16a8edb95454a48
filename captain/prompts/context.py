"""What a turn's prompt says about the world besides the builder's text: the date, the channel, the conversation,
the customer (when the assistant may share it) and the memory variables. Plain data, filled by
`captain.answering.services.turn_context` and rendered by `context.jinja` after the persona.

Everything here is data a customer or an integration may have written (a contact name, an attribute, a
remembered value): it is rendered as a variable into our own template, never as template source, and each value
is flattened to one line so it can never open a section of its own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

MAX_VALUE_CHARS = 300


def one_line(value: object, limit: int = MAX_VALUE_CHARS) -> str:
    """A value as one bounded line: JSON for non-text (so `true`, `42` and lists read unambiguously)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class MemoryLine:
    name: str
    description: str
    value: str
    """Rendered value; empty when unset."""
    writable: bool
    """The model may change it with `remember`."""
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class TurnFacts:
    now: datetime
    """Aware datetime in the account's time zone."""
    time_zone: str
    channel: str
    """Human name of the channel (Telegram, WhatsApp Cloud, Slack, API)."""
    reply_limit: int | None
    """Characters one message may hold on this channel; None: no provider limit."""
    conversation_status: str = ""
    conversation_priority: str = ""
    labels: tuple[str, ...] = ()
    conversation_attributes: tuple[tuple[str, str], ...] = ()
    share_contact: bool = False
    contact_name: str = ""
    contact_email: str = ""
    contact_attributes: tuple[tuple[str, str], ...] = ()
    memory: tuple[MemoryLine, ...] = ()
    blocks: tuple[str, ...] = field(default_factory=tuple)
    """Extra blocks for this turn (e.g. a shortcut's tool result), each already worded for the model."""

    @property
    def date_line(self) -> str:
        return f"{self.now:%A %Y-%m-%d %H:%M} ({self.time_zone})"
