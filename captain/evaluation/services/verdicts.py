"""Whether an answer of a test run was verified against the knowledge, refused, or neither.

The one place that reads the knowledge step's action names: a new action (a new way the knowledge step
answers or declines) gets its line in VERIFIED_ACTIONS or REFUSED_ACTIONS here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from captain.runtime import RunEvent

VERIFIED_ACTIONS = frozenset({"answered", "faq_answer", "evidence_answer"})
"""Replies the knowledge step stands behind: written from the sources and past the grounding check, an
approved FAQ answer given as written, or a reply built from one source sentence (evidence_answer)."""
REFUSED_ACTIONS = frozenset({"unknown", "unknown_handoff", "off_topic", "grounding_handoff"})
"""The knowledge step declined: nothing in the knowledge answers it, it is off topic, or the reply stated what
no source supports."""
# A team without knowledge (no step, or its action "off") has nothing to check a reply against: its replies
# count as verified, as the issue defines it. Anything else (a clarifying question "clarify", an action added later) is a reply nobody
# checked against the knowledge: "unchecked", so a new action is never counted as verified by accident.

VERIFIED, REFUSED, UNCHECKED, ERROR = "verified", "refused", "unchecked", "error"


@dataclass(frozen=True)
class Verdict:
    verdict: str
    action: str
    """The last knowledge step's action; empty when the turn had none."""


def knowledge_events(events: Sequence[RunEvent]) -> list[RunEvent]:
    return [e for e in events if e.type == "knowledge"]


def verdict_of(outcome: str, events: Sequence[RunEvent]) -> Verdict:
    """The verdict of one answered test question, from its outcome kind (reply, human_handoff, resolve, error)
    and the run events of the turn.

    - error: the run failed (model unavailable, internal error).
    - refused: a handoff to people (a grounding failure ends as one), or a knowledge action that declines
      (unknown, unknown_handoff, off_topic, grounding_handoff), even when the customer got a polite reply.
    - verified: a reply whose last knowledge action is answered / faq_answer / evidence_answer and whose final
      attempt passed the grounding check, or a reply from a team without a knowledge step (or with it off).
    - unchecked: any other reply (a clarifying question "clarify", an action this mapping does not know).
    """
    steps = knowledge_events(events)
    action = steps[-1].name if steps else ""
    if outcome == "error":
        return Verdict(ERROR, action)
    if outcome in ("human_handoff", "handoff") or action in REFUSED_ACTIONS:
        return Verdict(REFUSED, action)
    if outcome != "reply":
        return Verdict(UNCHECKED, action)
    if not steps or action == "off":
        return Verdict(VERIFIED, action)
    if action in VERIFIED_ACTIONS and not _final_attempt_unsupported(steps[-1].data):
        return Verdict(VERIFIED, action)
    return Verdict(UNCHECKED, action)


def _final_attempt_unsupported(data: dict[str, Any]) -> bool:
    """Whether the reply as given still had unsupported specifics. The knowledge step writes a failed reply
    again once and lists each failed attempt in `unsupported`: one entry means the rewrite passed, two that the
    rewrite failed too (which production turns into a handoff, so a reply with two is a mapping left stale)."""
    unsupported = data.get("unsupported") or []
    return len(unsupported) >= 2
