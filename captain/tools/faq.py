"""FAQ retrieval for the `faq_lookup` tool: semantic scores from the shared multilingual encoder."""

from __future__ import annotations

from dataclasses import dataclass

from ..conf import captain_setting
from ..models import FaqEntry
from ..retrieval import best_matches


@dataclass(frozen=True)
class FaqHit:
    question: str
    answer: str
    score: float


def faq_search(*, assistant_id: int, query: str, limit: int = 3) -> list[FaqHit]:
    """The best FAQ entries for `query`, or nothing when none scores above the threshold."""
    entries = list(
        FaqEntry.objects.filter(assistant_id=assistant_id, enabled=True).only("question", "answer")
    )
    if not entries:
        return []
    # A document scores as its best text: the question alone matches short queries, question + answer longer ones.
    documents = [(e.question, f"{e.question}\n{e.answer}") for e in entries]
    matches = best_matches(query, documents, threshold=captain_setting("FAQ_SCORE_THRESHOLD"), limit=limit)
    return [
        FaqHit(question=entries[i].question, answer=entries[i].answer, score=score) for i, score in matches
    ]
