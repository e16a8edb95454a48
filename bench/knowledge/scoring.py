"""Scoring a reply against a benchmark question (pure functions: the figures are reproducible from the JSON)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from captain.runtime.knowledge import Evidence, unsupported_facts

from .dataset import Question

# What a reply that declines looks like, EN and ZH (our fixed texts and the model's own wording).
_DECLINES = re.compile(
    r"don't have|do not have|don't know|do not know|not sure|no information|couldn't find|could not find|"
    r"can only help|can't help|cannot help|unable to|connect you|member of our team|a person|"
    r"不知道|没有找到|没有相关|无法|只能回答|转接|人工",
    re.IGNORECASE,
)


def facts_present(reply: str, question: Question) -> bool:
    """Every required fact is in the reply (one of its spellings, case-insensitive, spaces ignored for CJK)."""
    text = reply.lower()
    squashed = re.sub(r"\s+", "", text)
    for group in question.facts:
        if not any(alt.lower() in text or re.sub(r"\s+", "", alt.lower()) in squashed for alt in group):
            return False
    return True


def declines(reply: str) -> bool:
    return bool(_DECLINES.search(reply))


def invented_specifics(reply: str, question: Question, corpus: Evidence) -> list[str]:
    """Specifics of a reply to an unanswerable or off-topic question that are not in the help centre or the
    question (numbers, prices, currencies, e-mails, links), plus any `forbidden` item the dataset names."""
    found = unsupported_facts(reply, _with_question(corpus, question))
    lowered = reply.lower()
    found += [f for f in question.forbidden if f and f.lower() in lowered]
    return list(dict.fromkeys(found))


def _with_question(corpus: Evidence, question: Question) -> Evidence:
    asked = Evidence.of([question.question, *(m.get("content", "") for m in question.previous)])
    return Evidence(
        corpus.numbers | asked.numbers,
        corpus.emails | asked.emails,
        corpus.urls | asked.urls,
        corpus.currencies | asked.currencies,
    )


def percentile(values: Iterable[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]
