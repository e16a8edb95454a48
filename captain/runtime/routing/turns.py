"""The conversation as the router sees it: turns, the history window, and how a window is written out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

MAX_HISTORY_CHARS = 160
"""Each history message is cut to this many characters in our router prompts (the latest message is not)."""


@dataclass(frozen=True)
class Turn:
    """One message of the conversation as the router sees it."""

    role: str
    """user or assistant."""
    content: str
    agent: str = ""
    """Node key that wrote an assistant message."""


def window(history: list[Turn], rounds: int) -> list[Turn]:
    """The last `rounds` customer rounds (a customer message and the replies after it); 0 -> nothing."""
    if rounds <= 0:
        return []
    starts = [i for i, t in enumerate(history) if t.role == "user"]
    if len(starts) <= rounds:
        return list(history)
    return history[starts[-rounds] :]


def _cut(text: str, limit: int = MAX_HISTORY_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_history(turns: list[Turn], titles: Mapping[str, str]) -> str:
    """One line per turn, `customer: ...` or `<title of the node that wrote it>: ...`; `(none)` when empty."""
    lines = []
    for t in turns:
        if t.role == "user":
            lines.append(f"customer: {_cut(t.content)}")
        else:
            lines.append(f"{titles.get(t.agent, 'agent')}: {_cut(t.content)}")
    return "\n".join(lines) or "(none)"
