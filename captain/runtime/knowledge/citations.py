"""Which sources a reply used. A small model rarely writes citation markers, so besides explicit `[n]` markers a
source counts as cited when the reply states one of its specifics (a number, an e-mail address, a link) or when
most of the reply's words come from it."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .grounding import Evidence, unsupported_facts
from .sources import Source
from .tokens import tokens

_MARKER_RE = re.compile(r"\s?\[(\d{1,2})\]")
# Share of the reply's words found in one source for it to count as used, and the fewest shared words.
OVERLAP_SHARE = 0.5
OVERLAP_MIN_WORDS = 3


def strip_markers(reply: str) -> str:
    """The reply without `[n]` markers (the customer has no numbered list to look them up in)."""
    return _MARKER_RE.sub("", reply).strip()


_NO_EVIDENCE = Evidence(frozenset(), frozenset(), frozenset(), frozenset())


def _specifics(reply: str) -> set[str]:
    """The reply's numbers, e-mail addresses and links (currency marks alone say too little about the source)."""
    return {
        f
        for f in unsupported_facts(reply, _NO_EVIDENCE)
        if any(c.isdigit() for c in f) or "@" in f or "." in f
    }


def _states_specifics_of(specifics: set[str], reply: str, source: Source) -> bool:
    if not specifics:
        return False
    missing_here = set(unsupported_facts(reply, Evidence.of([source.title, source.text, source.url])))
    return bool(specifics - missing_here)


def cited_numbers(reply: str, sources: Sequence[Source]) -> list[int]:
    """1-based numbers of the sources the reply used, in source order."""
    cited: set[int] = {int(n) for n in _MARKER_RE.findall(reply) if 1 <= int(n) <= len(sources)}
    words = set(tokens(strip_markers(reply)))
    specifics = _specifics(reply)
    for number, source in enumerate(sources, start=1):
        if number in cited:
            continue
        if _states_specifics_of(specifics, reply, source):
            cited.add(number)
            continue
        shared = words & set(tokens(f"{source.title} {source.text}"))
        if words and len(shared) >= OVERLAP_MIN_WORDS and len(shared) / len(words) >= OVERLAP_SHARE:
            cited.add(number)
    return sorted(cited)
