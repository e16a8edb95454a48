"""Why a reply may not be sent: the findings of the grounding check (`claims`), in words the model can act on when
it writes the reply again and a person can read in the debug log."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .tokens import has_cjk

Problem = Literal[
    "not_in_sources",
    "unknown_topic",
    "wrong_context",
    "unsupported",
    "language",
    "echo",
    "answers_no",
    "ambiguous",
]
"""`unknown_topic`: the reply repeats what the customer asked about, and no source mentions it at all."""


@dataclass(frozen=True)
class Finding:
    """One reason a reply may not be sent, in words the model (on the rewrite) and a person can act on."""

    problem: Problem
    sentence: str
    detail: str
    written: tuple[str, ...] = ()


def language_finding(reply: str, language: str) -> Finding | None:
    cjk = sum(1 for ch in reply if "\u4e00" <= ch <= "\u9fff")
    latin = sum(1 for ch in reply if ch.isascii() and ch.isalpha())
    if language == "zh" and not has_cjk(reply) and latin:
        return Finding("language", reply[:80], "the customer writes in Chinese; the reply must be in Chinese")
    if language == "en" and cjk > latin:
        return Finding("language", reply[:80], "the customer writes in English; the reply must be in English")
    return None


def correction_note(findings: Sequence[Finding]) -> str:
    """The instruction added for the one rewrite: what was wrong, in words a small model can act on."""
    lines = [f"- {f.detail}" for f in findings[:4]]
    return (
        "\n\n## Correction\nYour previous answer could not be sent:\n"
        + "\n".join(lines)
        + "\nAnswer again using only facts written in the sources, each about exactly what the customer asked. "
        "If the sources do not say it, say you do not know and offer to connect a person."
    )
