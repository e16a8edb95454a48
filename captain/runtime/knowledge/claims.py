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
- the reply must be in the customer's language;
- a yes/no question the source sentence that answers says "no" to must not get a reply without a "no", and a
  value two places (items, seasons) state differently must not be given for one of them when the customer named
  neither (`conflicts`: the answerer asks which one instead).

No model call: it runs on every reply and costs a few milliseconds. Calibrated on the tuning help centre only
(`python -m bench.knowledge`); the held-out sets report how far that carries.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from .asked import unanswered
from .conflicts import (
    answers_no,
    choices,
    named_one,
    named_words,
    required_named,
    unsourced_topic,
    word_pairs,
    wrong_column,
)
from .everyday import is_everyday
from .findings import Finding, echo_finding, language_finding
from .grounding import Evidence, Specific, quoted, specifics, squashed, states, without_list_markers
from .outranked import outranked
from .statements import GENERIC_WORDS, absent_names, is_claim
from .tokens import has_cjk, idf_weights, tokens
from .units import Unit, split_sentences, units_of

Encode = Callable[[list[str]], np.ndarray]
# A reply may write "1月" for the customer's "一月": the same words for telling an echo.

# Share of the sources' sentences a word may appear in and still say what a sentence is about.
COMMON_WORD_SHARE = 0.5
NAMED_SHARE = 0.05
NAMED_LEAST = 3
"""A question's topic word at most max(NAMED_LEAST, NAMED_SHARE x passages) of the assistant's passages hold names
the specific thing asked about (`conflicts.named_words`): "狂犬" in a vet clinic's help centre, not "狗狗"."""
EVERYDAY_WORDS = False
"""Whether a named word of everyday language ("address", "whole", `everyday.is_everyday`) needs a value's sentence
to hold it only when the reply's sentence repeats it (`conflicts.required_named`). Off: replayed on the saved
replies it freed one right tuning reply and let three wrong ones through, and on the held-out sets one right and
four wrong (docs/knowledge.md, "Everyday words")."""


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
    question_cosine: float = 0.4
    """Least encoder cosine between the question and the paragraph of a source sentence sharing none of its rare
    words for a value from it to count as about what was asked."""
    other_words_cosine: float = 0.2
    """The same when the question shares no word with the sources or is in another language than the sentence."""
    answer: Unit | None = None
    """The source sentence that best answers the customer's new message (the evidence's first), for yes/no."""
    asked: str = ""
    """The customer's new message alone (`question` also holds the turn it follows up on)."""
    tie_margin: float = 0.05
    """Two sentences stating different values this close in how much they are about the question are a tie."""
    tie_floor: float = 0.3
    """...and both at least this much about it: the customer asked about both and said which of neither."""
    free_text: str = ""
    """The conversation's and the instructions' text, for quoted literals."""
    told: frozenset[str] = frozenset()
    """Words a yes or no may be about without this turn's sources holding them: the instructions' words, and the
    question's words the assistant's knowledge mentions elsewhere ("open" in a question about Monday hours)."""
    ranking: Mapping[str, float] = field(default_factory=dict)
    """The evidence score of each knowledge sentence by its text (`evidence.evidence_ranking`); empty: not read."""
    named: frozenset[str] = frozenset()
    """The question's topic words that few of the assistant's passages hold (`named_words`): the thing the customer
    named, as the help centre words it. A value from a sentence in the question's language holding none of them
    is about something else, however many of the question's common words ("dog", "price") it shares."""
    everyday: frozenset[str] = frozenset()
    """Those of `named` that are everyday language: the rule reads them only in a reply sentence repeating them."""
    _all_text: str = field(default="", init=False)
    _reply_numbers: frozenset[str] = field(default=frozenset(), init=False)
    _unit_vectors: np.ndarray | None = field(default=None, init=False)
    _has_han: bool = field(default=False, init=False)
    _cosines: dict[int, float] = field(default_factory=dict, init=False)
    _vocabulary: frozenset[str] = field(default=frozenset(), init=False)
    _has_latin: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        self._unit_evidence = [Evidence.of([u.full]) for u in self.units]
        # What a sentence is about: its words, its headings, and the rest of its paragraph.
        block_text: dict[int, list[str]] = {}
        for unit in self.units:
            block_text.setdefault(unit.block, []).append(unit.text)
        self._unit_words = [
            frozenset(w for w in tokens(f"{u.context}\n" + "\n".join(block_text[u.block])) if not w.isdigit())
            for u in self.units
        ]
        self._vocabulary = frozenset().union(*self._unit_words) if self._unit_words else frozenset()
        self._has_latin = any(not has_cjk(w) for w in self._vocabulary)
        # Chinese words are read for "no source mentions it" only against Chinese sources: an English help
        # centre's answer to a Chinese question shares none of its words.
        self._has_han = any(has_cjk(w) for w in self._vocabulary)
        self._idf = idf_weights(self._unit_words, max_share=COMMON_WORD_SHARE)

    def findings(self, reply: str) -> list[Finding]:
        out: list[Finding] = []
        echo = echo_finding(reply, self.question)
        if echo is not None:
            return [echo]
        language = language_finding(reply, self.language)
        if language is not None:
            out.append(language)
        # An offer of a person or a question back is not a "yes": only a reply that states something is read.
        claims = [x for x in split_sentences(reply) if is_claim(x)]
        if self.answer is not None and claims and answers_no(self.asked or self.question, reply, self.answer):
            detail = f"the customer asked yes or no, and the source sentence that answers says no: {self.answer.full!r}"
            out.append(Finding("answers_no", reply[:80], detail))
        if (missing := unanswered(self.asked or self.question, reply, claims)) is not None:
            out.append(missing)
        self._reply_numbers = Evidence.of([reply]).numbers
        for sentence in split_sentences(without_list_markers(reply).replace("\n", " \n ")):
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
        missing += [q for q in quoted(sentence) if squashed(q) not in self._written()]
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
        # A value some source states is checked against the sources even when the conversation or the
        # instructions also hold it (a "4" in the system rules must not excuse the neighbouring row's €4).
        anchored = [
            s for s in found if s.kind != "currency" and any(s.in_evidence(e) for e in self._unit_evidence)
        ]
        absent = (
            absent_names(self.question, sentence, self._vocabulary, latin=self._has_latin) if anchored else []
        )
        if absent:
            return [
                Finding(
                    "unknown_topic",
                    sentence,
                    f"no source says anything about {', '.join(repr(w) for w in absent)}",
                    tuple(absent),
                )
            ]
        if anchored:
            scores = self._about(sentence)
            for specific in anchored:
                finding = self._context(sentence, specific, scores)
                if finding is not None:
                    out.append(finding)
        elif not found:
            topic = unsourced_topic(
                self.asked or self.question, sentence, self._vocabulary | self.told, chinese=self._has_han
            )
            if topic and self.units:
                listed = ", ".join(repr(w) for w in topic)
                out.append(
                    Finding("unknown_topic", sentence, f"no source says anything about {listed}", topic)
                )
            elif (unsupported := self._unsupported_sentence(sentence)) is not None:
                out.append(unsupported)
        return out

    def _about(self, sentence: str) -> list[float]:
        """How much each source sentence is about what was asked: the share of the question's rare words it
        holds (the reply's own words only when the question has none: a copied sentence always holds its own);
        the encoder's cosine when neither shares a word with the sources."""
        wanted = {w for w in tokens(self.question) if w in self._idf}
        if not wanted:
            wanted = {w for w in tokens(sentence) if w in self._idf}
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
            if i not in holding and states(e, specific.kind) and scores[i] - best_holding >= margin
        ]
        home_index = max(holding, key=scores.__getitem__)
        home = self.units[home_index]
        column = wrong_column(home, lambda v: specific.in_evidence(Evidence.of([v])), self.question)
        if column is not None:
            detail = f"{specific.written!r} is the {column[0]!r} column of {home.text!r}; what was asked: {column[1]!r}"
            return Finding("wrong_context", sentence, detail, (specific.written,))
        across = home.language != ("zh" if has_cjk(self.question) else "en")
        if rivals and self.encode is not None and not home.row and (scores[home_index] > 0 or across):
            # Words can mislead (a shared "how long"); the encoder must agree the rival is closer to the question.
            # Not between table rows: the encoder hardly tells "large locker" from "small locker", the words do.
            # Nor when the value's sentence holds none of the question's words: the IELTS course's fee given for
            # the HSK exam that a sentence in the sources prices on its own. A sentence in another language than
            # the question cannot hold its words, so there only the encoder can tell: the English answer to
            # "洗碗机安装费多少钱" is not outdone by a Chinese repair-fee sentence sharing "洗碗机".
            home_cosine = self._question_cosine(home_index)
            rivals = [i for i in rivals if self._question_cosine(i) > home_cosine]
        if not rivals:
            if self._about_the_question(home_index, sentence):
                return self._tie(sentence, specific, holding, scores) or self._outranked(
                    sentence, specific, holding
                )
            return Finding(
                "wrong_context",
                sentence,
                f"{specific.written!r} comes from {home.text!r}, which is not about what the customer asked",
                (specific.written,),
            )
        rival = self.units[max(rivals, key=scores.__getitem__)]
        return Finding(
            "wrong_context",
            sentence,
            f"{specific.written!r} comes from {home.text!r}, which is about something else; what the sources "
            f"say about what was asked: {rival.full!r}",
            (specific.written,),
        )

    def _tie(
        self, sentence: str, specific: Specific, holding: list[int], scores: list[float]
    ) -> Finding | None:
        """A value given for one of two (or three) things the question fits equally well, each stating its own
        value, when the reply gives only this one: the customer gets a question back, not a guess."""
        home_index = max(holding, key=scores.__getitem__)
        best = scores[home_index]
        # Only the customer's own words can show they named neither: a question in another language than the
        # sources is scored by the reply's words, which name the one it picked.
        # Only between the knowledge's sentences: a tool's result is no option to offer ("faq_lookup").
        prose = len(self.units) if self.prose_units is None else self.prose_units
        if (
            best < self.tie_floor
            or home_index >= prose
            or not any(w in self._idf for w in tokens(self.question))
        ):
            return None
        home = self._unit_evidence[home_index]
        tied = [
            i
            for i, e in enumerate(self._unit_evidence[:prose])
            if i not in holding
            and self.units[i].block != self.units[home_index].block
            and states(e, specific.kind)
            # A price against a price, a count against a count: not a fee against an exam score.
            and bool(e.currencies) == bool(home.currencies)
            and abs(scores[i] - best) < self.tie_margin
            # Another value, and one the reply does not also give ("€7.50 on one boat, €13 on the other" is fine).
            and (e.numbers - home.numbers)
            and not (e.numbers - home.numbers) & self._reply_numbers
        ]
        if not tied:
            return None
        tied.sort(key=lambda i: -scores[i])
        options = choices(self.units[home_index], [self.units[i] for i in tied[:2]])
        if not options or named_one(options, self.question):
            return None
        return Finding(
            "ambiguous",
            sentence,
            f"{specific.written!r} is what the sources say for {options[0]}; they say otherwise for "
            f"{', '.join(options[1:])}, and the customer did not say which",
            tuple(options),
        )

    def _outranked(self, sentence: str, specific: Specific, holding: list[int]) -> Finding | None:
        prose = len(self.units) if self.prose_units is None else self.prose_units
        units, numbers, said = (self.units, self._unit_evidence), self._reply_numbers, self.free.numbers
        return outranked(
            sentence,
            specific,
            units,
            holding,
            self.ranking,
            prose=prose,
            reply_numbers=numbers,
            said_numbers=said,
        )

    def _about_the_question(self, index: int, sentence: str) -> bool:
        """Whether the best source sentence holding a value is about what was asked at all: it holds one of the
        question's rare words, or the encoder finds its paragraph close to the question (another language,
        other words). Without an encoder and without shared words there is nothing to tell by."""
        asked = set(tokens(self.question)) - GENERIC_WORDS
        if not asked:
            return True
        prose = len(self.units) if self.prose_units is None else self.prose_units
        same_language = self.units[index].language == ("zh" if has_cjk(self.question) else "en")
        if same_language and index < prose and required_named(self.named, self.everyday, sentence):
            # Words the rest of the help centre shares ("狗狗", "cat") do not make a sentence about what was
            # asked: the grooming prices answered "狗狗的狂犬抗体检测多少钱" through "狗狗" alone.
            return any(word_pairs(w) <= self._unit_words[index] for w in self.named)
        rare = {w for w in asked if w in self._idf}
        if rare & self._unit_words[index]:
            return True
        # A word every source shares counts too: when all of them are about airport pick-up, "airport" says
        # nothing about which one answers, but a sentence holding it is on topic.
        common = asked & (self._vocabulary - self._idf.keys())
        if common & self._unit_words[index]:
            return True
        known = bool(asked & self._vocabulary)
        if self.encode is None:
            return not known
        across = self.units[index].language != ("zh" if has_cjk(self.question) else "en")
        threshold = self.other_words_cosine if across or not known else self.question_cosine
        return self._question_cosine(index) >= threshold

    def _question_cosine(self, index: int) -> float:
        """The encoder's cosine between the question and a unit's paragraph with its headings (cached)."""
        if index not in self._cosines:
            assert self.encode is not None
            unit = self.units[index]
            paragraph = " ".join(u.text for u in self.units if u.block == unit.block)
            vectors = self.encode([self.question, f"{unit.context}: {paragraph}"])
            self._cosines[index] = float(vectors[0] @ vectors[1])
        return self._cosines[index]

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

    def _written(self) -> str:
        """Everything the reply may quote, squashed: the sources' sentences and what is free to repeat."""
        if not self._all_text:
            self._all_text = squashed("\n".join([self.free_text, *(u.full for u in self.units)]))
        return self._all_text

    def _vectors(self) -> np.ndarray:
        if self._unit_vectors is None:
            assert self.encode is not None
            self._unit_vectors = self.encode([u.full for u in self.units])
        return self._unit_vectors


# An agent's instructions are the same text run after run (the team is built once per configuration): what they
# allow a reply to state is read once. Per text: no number, address, link, currency or word spans a line break,
# so the texts read one by one give what their join gave. Bounded: turn contexts pass through here too.
@lru_cache(maxsize=512)
def _instruction_evidence(text: str) -> Evidence:
    return Evidence.of([text])


@lru_cache(maxsize=512)
def _instruction_words(text: str) -> frozenset[str]:
    return frozenset(tokens(text))


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
    answer: Unit | None = None,
    asked: str = "",
    known: Sequence[str] = (),
    term_passages: Mapping[str, int] | None = None,
    passages: int = 0,
    ranking: Mapping[str, float] | None = None,
    everyday_words: bool | None = None,
) -> ClaimCheck:
    """The check of one turn: `sources` are (title, text) of the knowledge given, `tool_results` (tool name,
    result) what the tools returned; what the customer and the builder wrote is free to repeat. `known`: words of
    the question that the assistant's knowledge mentions somewhere, even if not in this turn's sources;
    `term_passages`: how many of the assistant's `passages` hold each of the question's words (retrieval's);
    `everyday_words`: `EVERYDAY_WORDS` unless given."""
    prose = units_of(sources)
    named = named_words(question, term_passages or {}, most=max(NAMED_LEAST, NAMED_SHARE * passages))
    everyday = EVERYDAY_WORDS if everyday_words is None else everyday_words
    return ClaimCheck(
        units=[*prose, *units_of(tool_results)],
        prose_units=len(prose),
        free=Evidence.joined([Evidence.of(conversation), *map(_instruction_evidence, instructions)]),
        free_text="\n".join([*conversation, *instructions]),
        told=frozenset().union(*map(_instruction_words, instructions), known),
        question=question,
        language=language,
        encode=encode,
        sentence_support=sentence_support,
        answer=answer,
        asked=asked,
        named=named,
        everyday=frozenset(w for w in named if is_everyday(w)) if everyday else frozenset(),
        ranking=ranking or {},
    )
