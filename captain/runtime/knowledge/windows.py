"""Evidence windows: what the prompt shows of the sources, each evidence sentence with its neighbours.

Four whole passages are up to 4,000 characters of which the answer is one sentence; the small model given them
copies a neighbouring fact or none. The evidence sentences alone lost answers that need the sentence before or
after (docs/knowledge.md, "Evidence, not pages"). A window keeps both: each of the best sentences with the
sentences next to it in its paragraph (a table row with the rows next to it), under its headings, in the source's
own order, and nothing of a document passage that holds none of them. FAQ entries are short and written as one
answer: every one retrieval found is shown whole (an address the evidence ranked low is still the entry's answer).
"""

from __future__ import annotations

from collections.abc import Sequence

from .evidence import Scored
from .sources import Source, source_text
from .units import Unit, units_of

NEIGHBOURS = 1
"""Sentences kept on each side of an evidence sentence."""


def windowed_sources(
    sources: Sequence[Source], ranked: Sequence[Scored], *, limit: int
) -> list[tuple[int, str]]:
    """(source number, the text the prompt shows of it), in source order: every FAQ entry whole, and each document
    passage one of the `limit` best sentences of `ranked` comes from as windows; other passages are left out."""
    units = units_of([(s.title, s.text) for s in sources])
    position = {_key(u): i for i, u in enumerate(units)}
    keep: dict[int, set[int]] = {i: set() for i, s in enumerate(sources) if s.kind == "faq"}
    for entry in ranked[:limit]:
        i = position.get(_key(entry.unit))
        if i is None:
            continue
        unit = units[i]
        for j in range(i - NEIGHBOURS, i + NEIGHBOURS + 1):
            if 0 <= j < len(units) and units[j].origin == unit.origin and _near(units[j], unit):
                keep.setdefault(unit.origin, set()).add(j)
    out = []
    for origin in sorted(keep):
        source = sources[origin]
        number = origin + 1
        if source.kind == "faq":
            out.append((number, source_text(number, source)))
            continue
        out.append((number, _window_text(number, source, [units[j] for j in sorted(keep[origin])], units)))
    return out


def _key(unit: Unit) -> tuple[int, int, str]:
    return (unit.origin, unit.block, unit.text)


def _near(other: Unit, unit: Unit) -> bool:
    """A neighbour worth showing: a sentence of the same paragraph, or a row of the same table (its rows are
    blocks of their own, two apart, under the same headings)."""
    if unit.row or other.row:
        return unit.row and other.row and other.context == unit.context
    return other.block == unit.block


def _window_text(number: int, source: Source, kept: Sequence[Unit], units: Sequence[Unit]) -> str:
    lines = [f"[{number}] {source.title}" if source.title else f"[{number}]"]
    heading = source.title
    previous: Unit | None = None
    for unit in kept:
        if unit.context and unit.context != heading:
            heading = unit.context
            # The source's title is on its first line already.
            lines.append(f"{heading.removeprefix(f'{source.title} > ')}:")
        elif previous is not None and units.index(unit) != units.index(previous) + 1:
            lines.append("...")
        lines.append(unit.text)
        previous = unit
    return "\n".join(lines)
