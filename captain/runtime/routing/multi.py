"""A message that asks two things: "my card hasn't arrived and can I change my PIN".

Judged as one text, such a message goes wherever its louder half points, and the other half is lost. So a
message with more than one clause is also judged clause by clause: when two clauses each point clearly at a
different node, the node in charge is told about the topic it does not hold (`Decision.also`), so it can say who
will answer that part. Where the message goes (`strategy`): a clear judgement of the whole message stands, since
a clause that only sets the scene ("I am at the hotel now, find me a restaurant nearby") names a topic the customer is not asking about; when the
whole message is unclear, the first topic in the text (what the customer asked first).

A clause points clearly at a node when its evidence for that node reaches the floor plus the margin (what a clear
switch away from a specialist needs) and beats every other node by `which_gap`: a clause that only sets the
scene ("hi, I'm travelling and I need a flight") points nowhere. Short clauses ("thanks", "and also") point nowhere, so a
greeting before a question ("hi, and where is my parcel?") is one topic. One encoder call per clause; a
message of one clause costs nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .calibration import Calibrator
from .scoring import Encoder
from .thresholds import RoutingThresholds
from .view import RoutingView

# Where one request ends and another may begin: sentence ends, and the connectives that join two requests.
# "and" alone also joins the parts of one request ("bread and butter"): a split only matters when both sides
# point clearly at different nodes.
_BOUNDARY = re.compile(
    r"[?？!！。;；，,\n]+"
    r"|,?\s+(?:and also|and|also|plus|as well as|besides|another thing|one more thing)\s+"
    r"|[，,]?\s*(?:还有|另外|顺便|以及|并且|同时|再帮我|也想|而且)",
    re.IGNORECASE,
)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
MIN_WORDS = 3
"""A clause of fewer words (or fewer than `MIN_CJK` Chinese characters) is too short to carry a topic."""
MIN_CJK = 4
MAX_CLAUSES = 4
"""Clauses judged per message: the encoder's cost stays bounded on a long e-mail."""


@dataclass(frozen=True)
class Topics:
    """Two clauses of one message that point at different nodes, in the order the customer wrote them."""

    first: str
    """Node in charge, a candidate, or a node reached through triage (`RoutingView.reach`)."""
    second: str
    first_clause: str
    second_clause: str
    reason: str


def clauses(message: str) -> list[str]:
    """The message's clauses long enough to carry a topic, in order (at most `MAX_CLAUSES`)."""
    parts = [p.strip(" ,，、.:：-") for p in _BOUNDARY.split(message)]
    return [p for p in parts if _long_enough(p)][:MAX_CLAUSES]


def _long_enough(clause: str) -> bool:
    cjk = len(_CJK.findall(clause))
    if cjk:
        return cjk >= MIN_CJK
    return len(clause.split()) >= MIN_WORDS


def two_topics(
    calibrator: Calibrator,
    encoder: Encoder,
    view: RoutingView,
    message: str,
    t: RoutingThresholds,
    *,
    people: Sequence[str] = (),
) -> Topics | None:
    """The first two clearly different topics of the message, or None (one clause, or one topic at most).
    `people` are left out: a request for a person is the people check's business, never a second topic."""
    parts = clauses(message)
    if len(parts) < 2:
        return None
    keys = [view.node, *(k for k in view.candidates if k not in people), *view.reach]
    found: list[tuple[str, str, float]] = []
    for clause in parts:
        ev = calibrator.measure(encoder, view.documents, clause, keys).evidence
        ranked = sorted(((k, ev[k]) for k in keys), key=lambda kv: -kv[1])
        best, score = ranked[0]
        second = ranked[1][1] if len(ranked) > 1 else float("-inf")
        if score < t.floor + t.margin or score - second < t.which_gap:
            continue
        if found and found[-1][0] == best:
            continue
        found.append((best, clause, score))
        if len(found) == 2:
            (a, ca, sa), (b, cb, sb) = found
            return Topics(a, b, ca, cb, f"two topics: {a} {sa:.1f}, then {b} {sb:.1f}")
    return None
