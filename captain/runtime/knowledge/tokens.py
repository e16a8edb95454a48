"""Word tokens for keyword matching in English and Chinese: lower-cased words (crude plural stripping, a tiny stop
list) plus CJK character bigrams, since Chinese has no spaces to split words on. Shared by the keyword side of
retrieval and the citation overlap, so both see the same words."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

_WORD_RE = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)
# CJK Unified Ideographs (+ ext. A), Hiragana, Katakana, Hangul syllables.
_CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7af]+")
# Tiny stop list: only words frequent enough to dominate overlap on short support questions.
# fmt: off
STOP_WORDS = frozenset((
    "a", "an", "and", "are", "at", "be", "by", "can", "do", "does", "for", "from", "has", "have",
    "how", "i", "in", "is", "it", "me", "my", "of", "on", "or", "that", "the", "there", "this",
    "to", "what", "when", "where", "which", "who", "why", "with", "you", "your",
))
# fmt: on


def tokens(text: str) -> list[str]:
    """Lower-cased words (crude plural stripping) plus CJK character bigrams (a unigram when alone)."""
    text = text.lower()
    out: list[str] = []
    for run in _CJK_RE.findall(text):
        out.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
    for word in _WORD_RE.findall(_CJK_RE.sub(" ", text)):
        if word in STOP_WORDS:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        out.append(word)
    return out


def has_cjk(text: str) -> bool:
    return bool(_CJK_RE.search(text))


def idf_weights(word_sets: Iterable[frozenset[str]], *, max_share: float | None = None) -> dict[str, float]:
    """log(1 + N / df) of each word over the given sets (sentences, passages). With `max_share`, words found in
    more than that share of the sets are left out: they say nothing about which one is meant."""
    sets = list(word_sets)
    df: dict[str, int] = {}
    for words in sets:
        for word in words:
            df[word] = df.get(word, 0) + 1
    most = max(1.0, max_share * len(sets)) if max_share is not None else float(len(sets))
    return {w: math.log(1 + len(sets) / n) for w, n in df.items() if n <= most}
