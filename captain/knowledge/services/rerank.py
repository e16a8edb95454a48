"""Second-stage ordering of the fused candidates of hybrid search (no Django).

Reciprocal rank fusion only sees ranks: a keyword hit on common words ("course", "fee") can push the passage the
encoder ranked first down, and a short FAQ pair that is vaguely about the topic scores as high as the passage that
states the detail asked about. The rerank orders the best fused candidates by

    cosine - faq_offset (FAQ pairs) + term_weight * coverage

where coverage is the IDF-weighted share of the query's terms (its specific words: place, product, numbers, CJK
bigrams) that the passage or its headings contain. An FAQ question is worded like a customer's question, so its
cosine runs higher than a document passage's at the same relevance (the thresholds differ by 0.15 for the same
reason): the offset puts the two kinds on one scale. A passage in the other script (CJK or not) than the query
shares no words with it, so coverage says nothing about it: it gets `cross_script_coverage` instead of zero, or
a Chinese question would never rank an English passage first. Only the first `RerankSettings.depth` fused
candidates move; the thresholds still decide what is kept, on the cosine alone. Weights measured on the main set
with `python -m bench.knowledge --retrieval` (a flat region: term_weight 0.2-0.4, faq_offset 0.08-0.15).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from captain.conf import captain_setting
from captain.runtime.knowledge import Source, tokens

# CJK Unified Ideographs (+ ext. A), Hiragana, Katakana, Hangul syllables: the ranges the keyword tokens use.
CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7af]+")
CJK_SHARE = 0.2
"""A text is CJK when at least this share of its letters are CJK characters (an English passage may quote a
Chinese name; a Chinese one is mostly Han characters even with English words in it)."""

CONTEXT_WEIGHT = 0.5
"""Weight of the previous turn's terms in a follow-up: they say what "it" is, the message says what is asked."""


@dataclass(frozen=True)
class RerankSettings:
    """How the fused candidates are reordered (`KNOWLEDGE_RERANK` overrides any field)."""

    enabled: bool = True
    depth: int = 20
    """Fused candidates reordered; the rest keep their fused order after them. Deep enough to reach the encoder's
    first passage when keyword hits on common words pushed it down the fused order."""
    term_weight: float = 0.3
    """Added to the cosine per unit of IDF-weighted query-term coverage (0..1)."""
    faq_offset: float = 0.1
    """Taken off an FAQ pair's cosine (question-to-question similarity runs high)."""
    cross_script_coverage: float = 0.4
    """The coverage given to a passage in the other script than the query."""

    @classmethod
    def from_settings(cls) -> RerankSettings:
        return cls(**(captain_setting("KNOWLEDGE_RERANK") or {}))


@dataclass(frozen=True)
class TermStats:
    """Document frequencies of keyword tokens over an assistant's passages (for IDF)."""

    df: Counter[str]
    passages: int

    @classmethod
    def of(cls, token_sets: Iterable[Iterable[str]]) -> TermStats:
        df: Counter[str] = Counter()
        n = 0
        for terms in token_sets:
            df.update(set(terms))
            n += 1
        return cls(df, n)

    def idf(self, term: str) -> float:
        return math.log(1.0 + self.passages / (1.0 + self.df.get(term, 0)))


def query_terms(query: str, context: str = "") -> dict[str, float]:
    """Term -> weight: the message's terms, and a follow-up's previous turn at `CONTEXT_WEIGHT`."""
    weights = dict.fromkeys(tokens(context), CONTEXT_WEIGHT) if context else {}
    weights.update(dict.fromkeys(tokens(query), 1.0))
    return weights


def coverage(terms: dict[str, float], source: Source, stats: TermStats) -> float:
    """IDF-weighted share (0..1) of the query's terms found in the passage or its title. Terms no passage
    contains are left out: they cannot tell candidates apart."""
    present = set(tokens(f"{source.title}\n{source.text}"))
    total = found = 0.0
    for term, weight in terms.items():
        if not stats.df.get(term):
            continue
        w = weight * stats.idf(term)
        total += w
        if term in present:
            found += w
    return found / total if total else 0.0


def is_cjk(text: str) -> bool:
    """Whether `text` is written mostly in CJK characters (Chinese, Japanese, Korean) or not."""
    sample = text[:400]
    cjk = sum(len(run) for run in CJK_RE.findall(sample))
    letters = sum(1 for ch in sample if ch.isalpha())
    return bool(letters) and cjk >= CJK_SHARE * letters


def rerank_score(
    passage: Source,
    cosine: float,
    terms: dict[str, float],
    stats: TermStats,
    settings: RerankSettings,
    *,
    query_cjk: bool,
) -> float:
    if is_cjk(f"{passage.title}\n{passage.text}") != query_cjk:
        share = settings.cross_script_coverage
    else:
        share = coverage(terms, passage, stats)
    offset = settings.faq_offset if passage.kind == "faq" else 0.0
    return cosine - offset + settings.term_weight * share


def rerank(
    order: Sequence[int],
    sources: Sequence[Source],
    cosines: Sequence[float],
    query: str,
    terms: dict[str, float],
    stats: TermStats,
    settings: RerankSettings,
) -> list[int]:
    """`order` (fused, best first) with its first `settings.depth` passages sorted by `rerank_score`."""
    if not settings.enabled or not order:
        return list(order)
    head = list(order[: settings.depth])
    query_cjk = is_cjk(query)
    score = {
        p: rerank_score(sources[p], float(cosines[p]), terms, stats, settings, query_cjk=query_cjk)
        for p in head
    }
    # Stable: equal scores keep their fused order.
    head.sort(key=lambda p: -score[p])
    return [*head, *order[settings.depth :]]
