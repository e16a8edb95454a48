"""A memory benchmark set: conversations in which the customer states a fact early (and sometimes changes it),
talks about other things, and finally asks something only that fact answers.

One JSON object per line (`data/main.jsonl`, `data/heldout.jsonl`):

    id          unique in the set
    lang        en | zh (mixed-language messages are labelled by their main language)
    company     the assistant's product name; description: the assistant's description (prices live here when
                the final question asks for one)
    variables   the memory variables the conversation needs: name, description, kind (text | number | boolean |
                choice), choices (choice only)
    turns       the customer's messages, in order; the last one is the final question
    expect      acceptable spellings of the right value (any one of them in the final answer)
    stale       values the customer gave before correcting them: an answer naming one is wrong
    wrong       other plausible values (the prices of the other plans): an answer naming one is wrong too

`load_set` refuses a set that cannot measure what it claims (see `problems`), so a typo in a data file fails
loudly instead of quietly skewing the figures.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from captain.memory.models import MEMORY_NAME_RE

LANGS = ("en", "zh")
KINDS = ("text", "number", "boolean", "choice")
FILLERS_AFTER_FACT = 3
"""Unrelated customer turns between the last statement of the fact and the final question."""
WINDOW_TURNS = 2
"""Customer turns a 4-message history window still shows at the final question (the previous one and the
question itself): the fact must not be in them, or history alone would answer."""


@dataclass(frozen=True)
class Variable:
    name: str
    description: str
    kind: str = "text"
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Conversation:
    id: str
    lang: str
    company: str
    description: str
    variables: tuple[Variable, ...]
    turns: tuple[str, ...]
    expect: tuple[str, ...]
    stale: tuple[str, ...] = ()
    wrong: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        """The customer corrected the fact midway (the expected value is the latest one)."""
        return bool(self.stale)

    @property
    def final_question(self) -> str:
        return self.turns[-1]


def normalise(text: str) -> str:
    """Case-folded, full-width letters and digits folded to ASCII, all whitespace removed: "KX19 ABD" and "kx19abd"
    are the same value, and Chinese text has no spaces to rely on anyway."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text).casefold())


def _pattern(value: str) -> re.Pattern[str]:
    # A value that starts or ends with a digit must not be part of a longer number: "12" is not in "120元".
    core = re.escape(normalise(value))
    before = r"(?<![0-9])" if value[:1].isdigit() else ""
    after = r"(?![0-9])" if value[-1:].isdigit() else ""
    return re.compile(before + core + after)


def mentions(text: str, values: tuple[str, ...] | list[str]) -> bool:
    """`text` names one of `values` (normalised, whole numbers only)."""
    squashed = normalise(text)
    return any(value.strip() and _pattern(value).search(squashed) for value in values)


def _fact_turn(conversation: Conversation) -> int | None:
    """Index of the last turn before the question that states the fact: it names an expected spelling or, for a
    value the answer is derived from (the price of a named plan), one of a choice variable's choices."""
    choices = tuple(c for v in conversation.variables for c in v.choices)
    for index in range(len(conversation.turns) - 2, -1, -1):
        turn = conversation.turns[index]
        if mentions(turn, conversation.expect) or mentions(turn, choices):
            return index
    return None


def problems(conversation: Conversation) -> list[str]:
    """Why this conversation cannot measure memory (empty when it can)."""
    out: list[str] = []
    c = conversation
    if c.lang not in LANGS:
        out.append(f"lang must be one of {LANGS}")
    if not c.variables:
        out.append("no variables")
    for v in c.variables:
        if not MEMORY_NAME_RE.match(v.name):
            out.append(f"variable name {v.name!r} is not a valid memory variable name")
        if v.kind not in KINDS:
            out.append(f"variable {v.name}: kind must be one of {KINDS}")
        if (v.kind == "choice") != bool(v.choices):
            out.append(f"variable {v.name}: choices go with kind choice, and only with it")
    if not c.expect:
        out.append("no expected value")
    fact = _fact_turn(c)
    if fact is None:
        out.append("no turn before the question states the fact")
    elif len(c.turns) - 1 - fact - 1 < FILLERS_AFTER_FACT:
        out.append(f"fewer than {FILLERS_AFTER_FACT} other turns between the fact and the question")
    if not (mentions(" ".join(c.turns[:-1]), c.expect) or mentions(c.description, c.expect)):
        out.append("the expected value is neither in an earlier turn nor in the description")
    window = c.turns[-WINDOW_TURNS:]
    for value in (*c.expect, *c.stale):
        if mentions(" ".join(window), [value]):
            out.append(f"{value!r} is in the last {WINDOW_TURNS} turns (history alone would see it)")
    if c.stale and not mentions(" ".join((*c.turns[:-1], c.description)), c.stale):
        out.append("no stale value is in an earlier turn or in the description")
    for a in c.expect:
        for b in (*c.stale, *c.wrong):
            if mentions(a, [b]) or mentions(b, [a]):
                out.append(f"expected {a!r} and wrong value {b!r} contain one another (ambiguous score)")
    return out


def _conversation(raw: dict[str, Any]) -> Conversation:
    def texts(key: str) -> tuple[str, ...]:
        value = raw.get(key) or []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{key} must be a list of strings")
        return tuple(value)

    variables = tuple(
        Variable(
            name=str(v["name"]),
            description=str(v.get("description", "")),
            kind=str(v.get("kind", "text")),
            choices=tuple(str(c) for c in v.get("choices") or []),
        )
        for v in raw.get("variables") or []
    )
    return Conversation(
        id=str(raw["id"]),
        lang=str(raw.get("lang", "")),
        company=str(raw.get("company", "")),
        description=str(raw.get("description", "")),
        variables=variables,
        turns=texts("turns"),
        expect=texts("expect"),
        stale=texts("stale"),
        wrong=texts("wrong"),
    )


def load_set(path: Path) -> list[Conversation]:
    """The conversations of one JSONL file; ValueError naming the line and the reason for any bad one."""
    out: list[Conversation] = []
    seen: set[str] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path.name}:{number}"
        try:
            raw = json.loads(line)
            conversation = _conversation(raw)
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{where}: {exc}") from exc
        found = problems(conversation)
        if conversation.id in seen:
            found.append("duplicate id")
        if found:
            raise ValueError(f"{where} ({conversation.id}): " + "; ".join(found))
        seen.add(conversation.id)
        out.append(conversation)
    return out
