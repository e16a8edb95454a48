"""Evidence, not pages: the few source sentences that answer the question, found after retrieval.

A passage of a help centre holds a dozen facts; a small model given four of them copies the wrong one or none. The
sentences (table rows, list items) of the retrieved sources are scored against the question by the encoder and by
the question's rare words (the item, place, season it names, which a sentence may only hold in its headings), and
the best few go first in the prompt, short, with their headings. The best one, when it clearly answers, is also
what the customer gets if the model's reply fails the check twice ("say it straight").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .asked import asked_kinds, gives_kind
from .sources import Source
from .tokens import has_cjk, idf_weights, tokens
from .units import Unit, units_of

Encode = Callable[[list[str]], np.ndarray]

MAX_EVIDENCE_CHARS = 400
WORD_WEIGHT = 0.5
"""Weight of the share of the question's rare words a sentence holds, next to its cosine."""
OTHER_KIND_PENALTY = 0.2
"""Asked how much, how long or at what time, a sentence giving none of that is a neighbour of the answer (the
late-return rule next to the collection's price), pushed down by this much. Measured on the tuning help centres
(docs/knowledge.md, "Evidence, not pages"): the expected facts first for 140 of 274 answerable questions instead of 134, no set
worse."""
# Questions asking for a value: a sentence that states none cannot answer them.
_ASKS_VALUE_RE = re.compile(
    r"\b(how (much|many|long|late|early|far|old)|what time|when|price|cost|fee|charge|deposit|hours?|"
    r"open|close|phone|number|e-?mail|address|link|website|url|rate|percent|minimum|maximum|limit)\b"
    r"|多少|几|什么时候|何时|价格|费用|收费|押金|电话|邮箱|地址|网址|时间|营业|开门|关门|最多|最少",
    re.IGNORECASE,
)
_DIGIT_RE = re.compile(r"\d")


@dataclass(frozen=True)
class Scored:
    unit: Unit
    score: float
    number: int
    """The source's number in the prompt (1-based)."""


def asks_for_value(question: str) -> bool:
    return bool(_ASKS_VALUE_RE.search(question))


def select_evidence(
    sources: Sequence[Source], *, query: str, context: str, encode: Encode, limit: int | None = 6
) -> list[Scored]:
    """The `limit` source sentences that best answer `query` (after `context`, the customer's turn before a short
    follow-up), best first (`limit` None: every sentence, ranked)."""
    units = units_of([(s.title, s.text) for s in sources])
    if not units or not query.strip():
        return []
    texts = [query] if not context else [query, f"{context}\n{query}"]
    queries = encode(texts)
    # Half what the sentence is about (with its headings), half what it says: the sentences of one FAQ answer or
    # one section share their headings, and on those alone the question's own sentence is not told from its
    # neighbours ("how long is the test?": the 40 minutes, not the results' 2 working days).
    about = np.max(encode([u.full for u in units]) @ queries.T, axis=1)
    says = np.max(encode([u.text for u in units]) @ queries.T, axis=1)
    cosine = (about + says) / 2
    words = _across_languages(units, _word_scores(units, f"{context}\n{query}" if context else query), query)
    wants_value = asks_for_value(query) or asks_for_value(context)
    kinds = asked_kinds(query) | asked_kinds(context)
    scored = []
    for i, unit in enumerate(units):
        score = float(cosine[i]) + WORD_WEIGHT * words[i]
        if wants_value and not _DIGIT_RE.search(unit.text):
            score -= 0.1
        if kinds and not any(gives_kind(unit.text, kind) for kind in kinds):
            score -= OTHER_KIND_PENALTY
        scored.append(Scored(unit, score, unit.origin + 1))
    scored.sort(key=lambda s: -s.score)
    return scored if limit is None else scored[:limit]


def evidence_ranking(scored: Sequence[Scored]) -> dict[str, float]:
    """Each sentence's evidence score by its text (the best, when two sources hold the same sentence): what the
    grounding check reads to tell which of two values the evidence puts first (`outranked`)."""
    ranking: dict[str, float] = {}
    for entry in scored:
        ranking[entry.unit.text] = max(entry.score, ranking.get(entry.unit.text, entry.score))
    return ranking


def _across_languages(units: Sequence[Unit], words: list[float], query: str) -> list[float]:
    """A sentence in the other language than the question's cannot share its words: it gets at least the mean
    share of the sentences in the question's language, so a Chinese question's English answer is not ranked below
    every Chinese neighbour for that alone."""
    language = "zh" if has_cjk(query) else "en"
    same = [w for u, w in zip(units, words, strict=True) if u.language == language]
    mean = sum(same) / len(same) if same else 0.0
    return [w if u.language == language else max(w, mean) for u, w in zip(units, words, strict=True)]


def _word_scores(units: Sequence[Unit], query: str) -> list[float]:
    unit_words = [frozenset(w for w in tokens(u.full) if not w.isdigit()) for u in units]
    idf = idf_weights(unit_words)
    wanted = {w for w in tokens(query) if w in idf}
    total = sum(idf[w] for w in wanted)
    if not total:
        return [0.0] * len(units)
    return [sum(idf[w] for w in wanted & words) / total for words in unit_words]


def evidence_block(evidence: Sequence[Scored]) -> str:
    """The prompt section that goes first: the sentences that answer, each with what it is about."""
    if not evidence:
        return ""
    # A unit is a sentence or a table row; a long JSON line from a tool is cut for the prompt, not for the check.
    lines = [f"[{e.number}] {e.unit.full[:MAX_EVIDENCE_CHARS]}" for e in evidence]
    return "## Evidence (the source sentences that answer the question)\n" + "\n".join(lines)


CLEAR_SCORE = 0.75
CLEAR_MARGIN = 0.08


def clear_answer(evidence: Sequence[Scored], *, language: str, question: str) -> Unit | None:
    """The one sentence that clearly answers, in the customer's language, or None.

    Clear: it scores well above the next sentence from a different place, and states a value when the question
    asks for one. Another language's sentence is not translated here: the customer then gets a person."""
    if not evidence:
        return None
    best = evidence[0]
    if best.score < CLEAR_SCORE or best.unit.language != language:
        return None
    rivals = [e for e in evidence[1:] if e.unit.text != best.unit.text]
    if rivals and best.score - rivals[0].score < CLEAR_MARGIN:
        return None
    if asks_for_value(question) and not _DIGIT_RE.search(best.unit.text):
        return None
    # Asked how much, how long or when: a sentence giving none of that is a neighbour, not the answer.
    kinds = asked_kinds(question)
    if kinds and not any(gives_kind(best.unit.text, kind) for kind in kinds):
        return None
    return best.unit
