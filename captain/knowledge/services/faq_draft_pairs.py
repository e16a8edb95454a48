"""The pure parts of FAQ drafting: reading the model's answer into question/answer pairs, the deterministic
support check, and duplicate detection by embedding similarity. No model call and no database write here.

Small models wrap JSON in ```json fences, add a sentence before or after it, return one object instead of an
array, or break off mid-array: `parse_pairs` takes what can be read and skips the rest, never raising.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from captain.assistants.services.drafting import json_values
from captain.knowledge.services.retrieval import get_encoder
from captain.runtime.knowledge.grounding import Evidence, unsupported_facts

MAX_QUESTION_CHARS = 500
MAX_ANSWER_CHARS = 2000


@dataclass(frozen=True)
class Pair:
    question: str
    answer: str

    @property
    def text(self) -> str:
        """What dedup compares: the question with its answer (see DUPLICATE_SIMILARITY)."""
        return f"{self.question}\n{self.answer}"


def _pair(item: object) -> Pair | None:
    if not isinstance(item, dict):
        return None
    lowered = {str(k).strip().lower(): v for k, v in item.items()}
    question = lowered.get("question", lowered.get("q"))
    answer = lowered.get("answer", lowered.get("a"))
    if not isinstance(question, str) or not isinstance(answer, str):
        return None
    question, answer = " ".join(question.split()), answer.strip()
    if len(question) < 5 or len(answer) < 2:
        return None
    if len(question) > MAX_QUESTION_CHARS or len(answer) > MAX_ANSWER_CHARS:
        return None
    return Pair(question, answer)


def parse_pairs(content: str | None) -> list[Pair]:
    """The question/answer pairs in a model's answer; [] when there are none. Never raises."""
    pairs: list[Pair] = []
    for value in json_values(content):
        # A list of pairs, one pair, or a wrapper object {"pairs": [...]} / {"faqs": [...]}.
        wrapped = value.get("pairs", value.get("faqs")) if isinstance(value, dict) else None
        items: list[Any] = (
            value if isinstance(value, list) else wrapped if isinstance(wrapped, list) else [value]
        )
        for item in items:
            pair = _pair(item)
            if pair is not None and pair not in pairs:
                pairs.append(pair)
    return pairs


def is_supported(pair: Pair, evidence: Evidence) -> bool:
    """True when every number, price, e-mail address and URL of the answer occurs in the evidence (the chunks
    or the person's replies the pair was drafted from): the runtime's grounding check, applied to drafts."""
    return not unsupported_facts(pair.answer, evidence)


def evidence_of(texts: Iterable[str]) -> Evidence:
    return Evidence.of(texts)


# Cosine similarity of "question\nanswer" above which a draft repeats an entry. Measured with the bundled
# encoder on EN/EN and EN/ZH pairs (tests/captain/knowledge/test_faq_drafts_dedup.py prints them): paraphrases
# with the same answer scored 0.66-0.84, different questions on the same topic ("how long does shipping take"
# / "how much does it cost", "return" / "exchange") 0.33-0.64. Questions alone do not separate (0.70 for the
# shipping time/cost pair, 0.52 for a true paraphrase), hence the answer is part of the text. 0.72 keeps a
# margin above the closest different pair: a missed duplicate costs a reviewer one click, a false one loses a
# draft.
DUPLICATE_SIMILARITY = 0.72


class Deduplicator:
    """Tells whether a pair repeats a known one: the assistant's entries, then each pair kept so far."""

    def __init__(self, known: Iterable[str], threshold: float = DUPLICATE_SIMILARITY) -> None:
        self.threshold = threshold
        texts = list(known)
        self.vectors = get_encoder().encode(texts) if texts else np.zeros((0, 512), dtype=np.float32)

    def similarity(self, pair: Pair) -> float:
        if not len(self.vectors):
            return 0.0
        vector = get_encoder().encode(pair.text)
        return float(np.max(self.vectors @ vector))

    def keep(self, pair: Pair) -> bool:
        """False for a duplicate; otherwise True, and the pair is known from now on."""
        vector = get_encoder().encode(pair.text)
        if len(self.vectors) and float(np.max(self.vectors @ vector)) >= self.threshold:
            return False
        self.vectors = np.vstack([self.vectors, vector[None, :]])
        return True
