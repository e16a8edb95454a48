"""Where a reply and its sources part ways with every value in a source: a "no" answered "yes", one of two places
(items, seasons) picked when the customer named neither, and the right table row's wrong column.

Both are what a small model does most with the right sources in front of it. Asked "can I bring my kayak on the
fast boat?" over "Kayaks are not allowed on the fast boat" and "Bicycles: €2.50", it writes "Yes, for €2.50": every
value is in a source, so the value checks pass. Asked "how much is a single?" over two boats' fare tables, it gives
one boat's fare as if there were one. Neither is caught by looking at values; both are caught by looking at what
the question asked and what the sources would have to agree on.

Pure functions over `Unit`s: no model call, a few microseconds per reply.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from .chinese import unknown_words, words
from .statements import GENERIC_WORDS, is_claim
from .tokens import has_cjk, tokens
from .units import Unit, split_sentences

# A yes/no question: English starts a sentence with an auxiliary verb; Chinese ends with 吗, or asks "A不A"
# ("能不能", "开不开") or 有没有/是否/能否/可否.
_YES_NO_EN_RE = re.compile(
    r"^\W*(?:(?:and|so|but|also|ok|okay|hi|hello|hey|please|sorry|then|btw)\W+)*"
    r"(?:can|could|may|might|is|isn'?t|are|aren'?t|am|do|does|don'?t|doesn'?t|did|will|won'?t|would|should|shall|"
    r"have|has|was|were|must)\b",
    re.IGNORECASE,
)
_YES_NO_ZH_RE = re.compile(r"吗|有没有|是否|能否|可否|([\u4e00-\u9fff])不\1")
_DIGIT_RE = re.compile(r"\d")
# Words that say "no". Not "no." before a number ("No. 5"), not 不 in words that are not a negation (不同 different,
# 不错 good, 不久 soon, 不少 many, 不仅 not only, 不断 keep on).
_NEGATION_RE = re.compile(
    r"\b(?:not|no(?!\.?\s?\d)|never|cannot|nor|none|closed|prohibited|forbidden|unavailable|non-refundable|"
    r"nonrefundable|excluded|neither)\b|n't\b|不(?![同错久少仅断过])|没有|没|无法|无需|禁止|谢绝|关闭|休息",
    re.IGNORECASE,
)


def is_yes_no_question(question: str) -> bool:
    """Whether some sentence of the customer's message asks a yes/no question (EN or ZH)."""
    if _YES_NO_ZH_RE.search(question):
        return True
    return any(_YES_NO_EN_RE.search(s) for s in split_sentences(question.replace("\n", " \n ")))


def negates(text: str) -> bool:
    return bool(_NEGATION_RE.search(text))


def answers_no(question: str, reply: str, answer: Unit | None) -> bool:
    """The customer asked yes or no, the source sentence that answers says no, and the reply says no "no" at all.

    Only this direction: a wrong "yes" sends a customer with a kayak to a boat that will refuse it; a reply that
    says "no" where a source says yes is at worst unhelpful, and negation words are too common in correct replies
    ("there is no fee") to read a "yes" source against them."""
    if answer is None or not is_yes_no_question(question):
        return False
    return negates(answer.full) and not negates(reply)


def label(unit: Unit, other: Unit) -> str:
    """What tells `unit` apart from `other` in the customer's words: the first heading where their headings
    differ, or a table row's first cell when both are rows under the same headings ("" when nothing does)."""
    mine = unit.context.split(" > ")
    theirs = other.context.split(" > ")
    for index, part in enumerate(mine):
        if index >= len(theirs) or part != theirs[index]:
            return part.strip()
    if unit.row and other.row:
        first = unit.text.split(";", 1)[0]
        return first.split(": ", 1)[-1].strip()
    return ""


def choices(home: Unit, rivals: Sequence[Unit], *, longest: int = 60) -> list[str]:
    """The options a clarifying question offers: the reply's own and each rival's label, when every one is short,
    different from the others, and none is empty. Empty: nothing to ask by."""
    labels = [label(home, rivals[0]), *(label(r, home) for r in rivals)]
    # An FAQ entry's title is a question ("How much is the IELTS course?"): two FAQ answers are two topics, not
    # two options of one, and a question is no option to offer.
    if any(not item or len(item) > longest or item.endswith(("?", "？")) for item in labels):
        return []
    unique = list(dict.fromkeys(labels))
    return unique if len(unique) == len(labels) else []


def named_one(options: Sequence[str], question: str) -> bool:
    """Whether the customer's words name one of the options already ("the school in Hangzhou" when the options
    are "Hangzhou Campus" and "Ningbo Learning Centre"): a word of one option that the others do not have."""
    words = [set(tokens(o)) for o in options]
    asked = set(tokens(question))
    return any(
        asked & (mine - set().union(*(w for j, w in enumerate(words) if j != i)))
        for i, mine in enumerate(words)
    )


def row_cells(unit: Unit) -> list[tuple[str, str]]:
    """A table row's (header, value) cells, as `units.table_row_text` wrote them ("Adult: €60.00; Senior: €42")."""
    if not unit.row:
        return []
    cells = []
    for part in unit.text.split("; "):
        header, sep, value = part.partition(": ")
        if sep:
            cells.append((header.strip(), value.strip()))
    return cells


def wrong_column(unit: Unit, holds: Callable[[str], bool], question: str) -> tuple[str, str] | None:
    """A value read from the wrong column of the right row: the question names one column's header ("for
    seniors") and the value is only in columns whose headers it does not name (the adult fare). Returns (the
    column the value is in, the cell the question names), or None.

    A row is one unit, so the value is "in the sentence about the ten-trip card" whichever column it came from;
    only the header says whom it is for."""
    asked = set(tokens(question)) - GENERIC_WORDS
    cells = row_cells(unit)
    named = [(h, v) for h, v in cells if _DIGIT_RE.search(v) and asked & (set(tokens(h)) - GENERIC_WORDS)]
    holding = [(h, v) for h, v in cells if holds(v)]
    if not named or not holding or any(cell in named for cell in holding):
        return None
    header, value = named[0]
    return holding[0][0], f"{header}: {value}"


CLARIFY_QUESTION = {
    "en": "To give you the right answer: do you mean {options}?",
    "zh": "为了给您准确的答复，请问您指的是{options}？",
}
_OR = {"en": " or ", "zh": "还是"}


def clarifying_question(options: Sequence[str], language: str) -> str:
    """One question back, in the customer's language, offering the options the sources distinguish."""
    language = language if language in CLARIFY_QUESTION else "en"
    if language == "en":
        joined = ", ".join(options[:-1]) + _OR["en"] + options[-1]
    else:
        joined = _OR["zh"].join(options)
    return CLARIFY_QUESTION[language].format(options=joined)


# The verbs a yes or no question is asked with: they say what is asked, not what about.
# fmt: off
_ASKING_VERBS = frozenset((
    "give", "bring", "take", "offer", "allow", "allowed", "get", "make", "come", "have", "need", "provide",
    "accept", "change", "still", "able", "possible",
    # Words that place the customer's own situation in time ("an item I bought last week"): not the topic.
    "bought", "ordered", "last", "week", "weeks", "month", "months", "year", "years", "yesterday", "today",
    "tomorrow", "ago",
))
# fmt: on


def unsourced_topic(
    asked: str, sentence: str, known: frozenset[str], *, chinese: bool = True
) -> tuple[str, ...]:
    """The words of a yes or no question that a reply's "yes" or "no" sentence repeats and no source mentions:
    "No, we do not offer scholarships for the intensive course." when no source says anything about scholarships.
    Such a sentence has no value to check, yet states something nobody wrote. Latin words of four letters or more,
    and Chinese words as jieba segments them ("转给" in "潮汐卡积分可以转给家人用吗"): a single character pair is
    not a word (measured on the bundled help centres: docs/knowledge.md#the-grounding-check)."""
    if not is_yes_no_question(asked) or not is_claim(sentence):
        return ()
    words = unknown_words(asked, sentence, known) if chinese and has_cjk(asked) else []
    said = set(tokens(sentence))
    return (
        *words,
        *(
            w
            for w in dict.fromkeys(tokens(asked))
            if w in said
            and w not in known
            and len(w) >= 4
            and not has_cjk(w)
            and not w.isdigit()
            and w not in GENERIC_WORDS
            and w not in _ASKING_VERBS
        ),
    )


_QUANTITY_RE = re.compile(r"^[一二三四五六七八九十两几半每]")


def topic_words(asked: str) -> list[str]:
    """The words of a question that can name what it is about: Latin words of four letters or more that are not
    asking, time or courtesy words, and Chinese words as jieba segments them that are not asking words or
    quantities ("一个月"). The same words `unsourced_topic` reads."""
    chinese = [w for w in dict.fromkeys(words(asked)) if not _QUANTITY_RE.match(w)] if has_cjk(asked) else []
    latin = [
        w
        for w in dict.fromkeys(tokens(asked))
        if len(w) >= 4
        and not has_cjk(w)
        and not w.isdigit()
        and w not in GENERIC_WORDS
        and w not in _ASKING_VERBS
    ]
    return [*chinese, *latin]


def word_pairs(word: str) -> frozenset[str]:
    """What `tokens` makes of one word: itself (Latin) or its character pairs (Chinese)."""
    return frozenset(tokens(word))


def named_words(asked: str, term_passages: Mapping[str, int], *, most: float) -> frozenset[str]:
    """The question's topic words that at least one and at most `most` of the assistant's passages hold (by the
    keyword index's counts of each token; a Chinese word by its rarest character pair, all of which must occur):
    the specific thing the customer named, as the help centre words it."""
    named = []
    for word in topic_words(asked):
        counts = [term_passages.get(t, 0) for t in word_pairs(word)]
        if counts and min(counts) > 0 and min(counts) <= most:
            named.append(word)
    return frozenset(named)


def required_named(named: frozenset[str], everyday: frozenset[str], sentence: str) -> frozenset[str]:
    """The named words a value stated in `sentence` must be tied to: those rare in the language itself, and the
    everyday ones the sentence repeats. A customer's everyday word ("address", "whole bar of chocolate", "after
    the summer one") may be said in other words by the source that answers ("Where is the service centre?", "6
    July"), so on its own it does not tie a value to the question; a reply saying "a regular check-up costs
    ¥1,280" does tie its value to "regular", and the sentence it came from must be about that."""
    said = set(tokens(sentence))
    return frozenset(w for w in named if w not in everyday or word_pairs(w) <= said)
