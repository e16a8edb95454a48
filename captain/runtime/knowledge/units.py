"""Sources cut into the sentences a claim can rest on, each with what it is about.

A price in a help centre is only true of something: the row of its table, the season of its heading, the city of
its paragraph. The grounding check (`claims`) and the evidence selection (`evidence`) both work on these units: a
sentence, a table row or a list item, together with the headings above it and, for a table row, its header row.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .tokens import has_cjk

_HEADING_RE = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_TABLE_SEPARATOR_RE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
# Sentence ends in English and Chinese. Not after a digit followed by a digit ("4.5"), which the look-behind on
# whitespace already avoids for English; Chinese full stops need no space after them.
_SENTENCE_END_RE = re.compile(r"(?<=[.!?;])\s+(?=\S)|(?<=[。！？；])")
_LIST_MARK_RE = re.compile(r"^\s*(?:[-*+•]|\d{1,2}[.)、])\s+")


@dataclass(frozen=True)
class Unit:
    """One sentence (or table row, or list item) of a source."""

    text: str
    context: str
    """The source's title (an FAQ question, a document's headings), the headings above the sentence inside the
    passage, and a table row's header row: what the sentence is about when it does not say so itself."""
    origin: int
    """Index of the source text it came from, in the order given to `units_of`."""
    block: int = 0
    """The paragraph it belongs to, numbered across all sources (each table row is a block of its own): a
    sentence of a paragraph is about what the whole paragraph is about."""
    row: bool = False
    """A table row: what it is about is in the row itself (its item), next to its neighbours' values."""

    @property
    def full(self) -> str:
        return f"{self.context}: {self.text}" if self.context else self.text

    @property
    def language(self) -> str:
        return "zh" if has_cjk(self.text) else "en"


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def table_row_text(header: Sequence[str], row: Sequence[str]) -> str:
    """A table row in words: "Item: Locker; Deposit: ¥100" (the header names what each value is)."""
    if len(header) != len(row):
        return " | ".join(row)
    return "; ".join(f"{h}: {v}" if h else v for h, v in zip(header, row, strict=True) if v)


def split_sentences(text: str) -> list[str]:
    out = []
    for part in _SENTENCE_END_RE.split(text):
        part = part.strip()
        if part:
            out.append(part)
    return out


def _passage_units(title: str, text: str, origin: int, block: int) -> list[Unit]:
    """The units of one source; blocks are numbered from `block` + 1."""
    units: list[Unit] = []
    headings: list[str] = []
    levels: list[int] = []
    header: list[str] | None = None
    block += 1
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            header = None
            block += 1
            continue
        heading = _HEADING_RE.match(line)
        if heading:
            # A heading closes every open heading of its level or deeper: the "## Slow ferry" after "## Express
            # boat" is its sibling, whether or not the document has a "#" title above both.
            level = len(heading.group(1))
            while levels and levels[-1] >= level:
                levels.pop()
                headings.pop()
            levels.append(level)
            headings.append(heading.group(2))
            header = None
            block += 1
            continue
        # A document's title is usually its first heading too: said once ("Fares > Express boat"), the evidence
        # lines in the prompt stay short.
        context = " > ".join(_once([title, *headings]))
        if line.startswith("|"):
            if _TABLE_SEPARATOR_RE.match(line):
                continue
            cells = _cells(line)
            if header is None:
                header = cells
                continue
            block += 1
            units.append(Unit(table_row_text(header, cells), context, origin, block, row=True))
            block += 1
            continue
        header = None
        line = _LIST_MARK_RE.sub("", line)
        units.extend(Unit(s, context, origin, block) for s in split_sentences(line))
    return units


def _once(parts: Sequence[str]) -> list[str]:
    """The non-empty parts, a part equal to the one before it left out."""
    out: list[str] = []
    for part in parts:
        if part and (not out or out[-1] != part):
            out.append(part)
    return out


def units_of(sources: Sequence[tuple[str, str]]) -> list[Unit]:
    """The units of (title, text) sources, in order."""
    out: list[Unit] = []
    for origin, (title, text) in enumerate(sources):
        out.extend(_passage_units(title.strip(), text, origin, out[-1].block if out else 0))
    return out
