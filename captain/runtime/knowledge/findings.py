"""Why a reply may not be sent: the findings of the grounding check (`claims`), in words the model can act on when
it writes the reply again and a person can read in the debug log."""

from __future__ import annotations

import re
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
    "unanswered",
]
"""`unknown_topic`: the reply repeats what the customer asked about, and no source mentions it at all.
`unanswered`: the customer asked for a price, a duration or a time of day and the reply gives none (`asked`)."""


@dataclass(frozen=True)
class Finding:
    """One reason a reply may not be sent, in words the model (on the rewrite) and a person can act on."""

    problem: Problem
    sentence: str
    detail: str
    written: tuple[str, ...] = ()


_PUNCTUATION_RE = re.compile(r"[\W_]+", re.UNICODE)
# Chinese numerals read as digits: a question's "一月一号" handed back as "1月1号" is still the question.
_HAN_DIGITS = str.maketrans("〇零一二三四五六七八九", "00123456789")


def echo_finding(reply: str, question: str) -> Finding | None:
    """A small model sometimes hands the question back as its answer: long enough to be the question (not a
    "Hello!" to "hello there") with its question mark (ASCII or full-width), or without it the whole question
    ("一月一号早上快船几点开始有" sent back as is)."""
    said = _PUNCTUATION_RE.sub("", reply).lower().translate(_HAN_DIGITS)
    asked = _PUNCTUATION_RE.sub("", question).lower().translate(_HAN_DIGITS)
    handed_back = "?" in reply or "？" in reply
    whole = len(said) >= max(6, len(asked) * 4 // 5)
    if (whole or (handed_back and len(said) >= max(6, len(asked) // 2))) and said in asked:
        return Finding("echo", reply[:80], "the reply repeats the customer's question instead of answering")
    return None


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
