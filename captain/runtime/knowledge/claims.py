"""The grounding check, sentence by sentence: each factual sentence of a reply must rest on one source sentence.

For every sentence of the reply:
- each specific (number, price, time, date, duration, e-mail, link, currency) must be in the evidence at all: the
  sources' sentences, or what is free to repeat (the conversation, the builder's instructions);
- a specific taken from a source must come from a sentence about what the customer asked. The sentences of the
  sources are scored by the customer's and the reply's words that are rare in the sources (the item, the city, the
  season: a table row's header and the headings above a sentence count as its words). When a sentence that states
  another value is clearly more about the question than every sentence stating this one, the value belongs to
  something else: "¥50" read from the neighbouring row, the regular hours given for a holiday;
- a factual sentence without specifics must be close (the bundled encoder's cosine) to some source sentence, when
  there are sources and an encoder; greetings, offers of help and questions back are not claims;
- the reply must be in the customer's language.

No model call: it runs on every reply and costs a few milliseconds. Calibrated on the tuning help centre only
(`python -m bench.knowledge`); the held-out sets report how far that carries.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from .grounding import Evidence, Specific, specifics
from .tokens import has_cjk, tokens
from .units import Unit, split_sentences, units_of

Encode = Callable[[list[str]], np.ndarray]
Problem = Literal["not_in_sources", "wrong_context", "unsupported", "language"]

# Sentences that state nothing about the company: courtesy, offers of a person, "I do not know". EN and ZH.
_NOT_A_CLAIM_RE = re.compile(
    r"\b(let me know|anything else|happy to help|glad to help|hope (this|that) helps|feel free|sorry|hello|hi|"
    r"hey|not sure|don'?t (know|have)|do not (know|have)|no information|(connect|transfer|put) you|"
    r"member of (our|the) team|a person|human|agent)\b|\b(thank|apolog|welcom|colleague)"
    r"|如有|还有什么|很高兴|感谢|谢谢|抱歉|不好意思|您好|你好|人工|同事|不确定|不清楚|没有找到|欢迎",
    re.IGNORECASE,
)
# Share of the sources' sentences a word may appear in and still say what a sentence is about.
COMMON_WORD_SHARE = 0.5


@dataclass(frozen=True)
class Finding:
    """One reason a reply may not be sent, in words the model (on the rewrite) and a person can act on."""

    problem: Problem
    sentence: str
    detail: str
    written: tuple[str, ...] = ()


@dataclass
class ClaimCheck:
    """The check for one turn: its sources' sentences, what is free to repeat, the question and its language."""

    units: Sequence[Unit]
    free: Evidence
    """Specifics anyone may repeat without a source sentence: the conversation's and the instructions'."""
    question: str
    language: str
    encode: Encode | None = None
    sentence_support: float | None = 0.3
    """Least cosine between a factual sentence without specifics and its closest source sentence (None: off)."""
    context_margin: float = 0.25
    """How much more about the question (share of its rare words) a sentence stating another value must be."""
    encoder_margin: float = 0.15
    """The same on the encoder's cosine, when the question and the reply share no word with the sources."""
    prose_units: int | None = None
    """How many of the first units are prose (knowledge) a sentence without specifics can be compared with; a
    tool's JSON result backs values, not sentences (None: all)."""
    _unit_evidence: list[Evidence] = field(default_factory=list, init=False)
    _unit_words: list[frozenset[str]] = field(default_factory=list, init=False)
    _idf: dict[str, float] = field(default_factory=dict, init=False)
    _unit_vectors: np.ndarray | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self._unit_evidence = [Evidence.of([u.full]) for u in self.units]
        self._unit_words = [frozenset(w for w in tokens(u.full) if not w.isdigit()) for u in self.units]
        count = len(self.units)
        df: dict[str, int] = {}
        for words in self._unit_words:
            for word in words:
                df[word] = df.get(word, 0) + 1
        self._idf = {
            w: math.log(1 + count / n) for w, n in df.items() if n <= max(1, COMMON_WORD_SHARE * count)
        }

    def findings(self, reply: str) -> list[Finding]:
        out: list[Finding] = []
        language = _language_finding(reply, self.language)
        if language is not None:
            out.append(language)
        for sentence in split_sentences(reply.replace("\n", " \n ")):
            out.extend(self._sentence(sentence))
        return out

    # -- one sentence ---------------------------------------------------------------------------------------------

    def _sentence(self, sentence: str) -> list[Finding]:
        found = specifics(sentence)
        missing = [
            s.written
            for s in found
            if not s.in_evidence(self.free) and not any(s.in_evidence(e) for e in self._unit_evidence)
        ]
        if missing:
            return [
                Finding(
                    "not_in_sources",
                    sentence,
                    f"{', '.join(repr(m) for m in missing)}: no source says this",
                    tuple(missing),
                )
            ]
        out: list[Finding] = []
        anchored = [s for s in found if s.kind != "currency" and not s.in_evidence(self.free)]
        if anchored:
            scores = self._about(sentence)
            for specific in anchored:
                finding = self._context(sentence, specific, scores)
                if finding is not None:
                    out.append(finding)
        elif not found:
            unsupported = self._unsupported_sentence(sentence)
            if unsupported is not None:
                out.append(unsupported)
        return out

    def _about(self, sentence: str) -> list[float]:
        """How much each source sentence is about what was asked: the share of the rare words of the question
        and of this reply sentence it holds; the encoder's cosine when they share no word with the sources."""
        wanted = {w for w in tokens(f"{self.question}\n{sentence}") if w in self._idf}
        total = sum(self._idf[w] for w in wanted)
        if total > 0:
            return [sum(self._idf[w] for w in wanted & words) / total for words in self._unit_words]
        if self.encode is None or not self.units:
            return [0.0] * len(self.units)
        vectors = self._vectors()
        query = self.encode([f"{self.question}\n{sentence}"])[0]
        return [float(v) for v in vectors @ query]

    def _context(self, sentence: str, specific: Specific, scores: list[float]) -> Finding | None:
        margin = self.context_margin if self._words_known(sentence) else self.encoder_margin
        holding = [i for i, e in enumerate(self._unit_evidence) if specific.in_evidence(e)]
        best_holding = max(scores[i] for i in holding)
        rivals = [
            i
            for i, e in enumerate(self._unit_evidence)
            if i not in holding and _states(e, specific.kind) and scores[i] - best_holding >= margin
        ]
        if not rivals:
            return None
        rival = self.units[max(rivals, key=scores.__getitem__)]
        home = self.units[max(holding, key=scores.__getitem__)]
        return Finding(
            "wrong_context",
            sentence,
            f"{specific.written!r} comes from {home.text!r}, which is about something else; what the sources "
            f"say about what was asked: {rival.full!r}",
            (specific.written,),
        )

    def _words_known(self, sentence: str) -> bool:
        return any(w in self._idf for w in tokens(f"{self.question}\n{sentence}"))

    def _unsupported_sentence(self, sentence: str) -> Finding | None:
        prose = len(self.units) if self.prose_units is None else self.prose_units
        if self.sentence_support is None or self.encode is None or not prose:
            return None
        if not is_claim(sentence):
            return None
        best = float(np.max(self._vectors()[:prose] @ self.encode([sentence])[0]))
        if best >= self.sentence_support:
            return None
        return Finding("unsupported", sentence, f"no source sentence says this (closest {best:.2f})")

    def _vectors(self) -> np.ndarray:
        if self._unit_vectors is None:
            assert self.encode is not None
            self._unit_vectors = self.encode([u.full for u in self.units])
        return self._unit_vectors


def is_claim(sentence: str) -> bool:
    """Whether a reply sentence states something about the company (not a greeting, an offer or a question)."""
    text = sentence.strip()
    if not text or text.endswith(("?", "？")) or _NOT_A_CLAIM_RE.search(text):
        return False
    return len(tokens(text)) >= 3


def _states(evidence: Evidence, kind: str) -> bool:
    if kind == "number":
        return bool(evidence.numbers)
    if kind == "email":
        return bool(evidence.emails)
    return bool(evidence.urls)


def _language_finding(reply: str, language: str) -> Finding | None:
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


def turn_check(
    *,
    conversation: Sequence[str],
    instructions: Sequence[str],
    sources: Sequence[tuple[str, str]],
    tool_results: Sequence[tuple[str, str]] = (),
    question: str,
    language: str,
    encode: Encode | None,
    sentence_support: float | None,
) -> ClaimCheck:
    """The check of one turn: `sources` are (title, text) of the knowledge given, `tool_results` (tool name,
    result) what the tools returned; what the customer and the builder wrote is free to repeat."""
    prose = units_of(sources)
    return ClaimCheck(
        units=[*prose, *units_of(tool_results)],
        prose_units=len(prose),
        free=Evidence.of([*conversation, *instructions]),
        question=question,
        language=language,
        encode=encode,
        sentence_support=sentence_support,
    )
