"""The semantic router's judgement: encoder scores in, a verdict out. A pure function: no model, no encoder.

1. A specialist's way back to triage is worth what triage could route the message to ("reach").
2. A terminal node (people) on a near tie with the second best is set aside for this decision.
3. Best candidate below `floor`: stay. A hand-back re-dispatch switches only on a score that could switch alone.
4. A clear switch (score, margin over staying, gap to the second): switch. Not better than staying: stay.
5. Anything else is unclear: the caller puts it to a tie-break (a model) or, without one, decides on the
   encoder alone with half the margin.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .decision import Phase
from .graph import HUMAN
from .thresholds import RoutingThresholds
from .view import RoutingView


@dataclass(frozen=True)
class Verdict:
    target: str
    """Node in charge after the decision (the node itself: stay)."""
    reason: str


@dataclass(frozen=True)
class Unclear:
    """Neither switching nor staying is clear."""

    best: str
    """The encoder's best candidate (what a tie-break question asks about)."""
    label: str
    """How the reason names it (`refunds (via assistant)` when reached through triage)."""
    closest: Verdict | None
    """Switching is clear, only the target is not: with a model at hand, go to the encoder's best unasked."""
    without_model: Verdict
    """No model may be asked (none configured, none allowed, budget spent): the encoder alone, half margin."""


@dataclass(frozen=True)
class Judgement:
    scores: dict[str, float]
    """Every score, rounded to 4 decimals (recorded on the decision)."""
    best: str
    """The encoder's best candidate, after a terminal node was set aside (recorded as `parsed`)."""
    note: str
    """Appended to the decision's reason ("human set aside: ..."), or empty."""
    verdict: Verdict | None
    """The decision when it is clear; None when it is `unclear`."""
    unclear: Unclear | None = None


def judge(raw: Mapping[str, float], view: RoutingView, phase: Phase, t: RoutingThresholds) -> Judgement:
    """`raw`: the encoder's score of the node itself, each candidate and each reached node."""
    effective = {k: raw[k] for k in view.candidates}
    via: dict[str, str] = {}
    for key, through in view.reach.items():
        if raw[key] > effective[through]:
            effective[through] = raw[key]
            via[through] = key
    stay = raw[view.node]
    if view.node == view.root:
        stay = max(stay, t.root_floor)
    scores = {k: round(v, 4) for k, v in raw.items()}
    ranked = sorted(effective.items(), key=lambda kv: -kv[1])
    note = ""
    if len(ranked) > 1 and ranked[0][0] in view.terminal and ranked[0][1] - ranked[1][1] < t.terminal_gap:
        note = (
            f"{ranked[0][0]} set aside: {ranked[0][1]:.2f} is within {t.terminal_gap:.2f} of {ranked[1][0]}"
        )
        ranked = ranked[1:]
    best, best_score = ranked[0]
    second_score = ranked[1][1] if len(ranked) > 1 else -1.0
    label = f"{best} (via {via[best]})" if best in via else best

    def verdict(target: str, reason: str) -> Judgement:
        return Judgement(scores, best, note, Verdict(target, reason))

    if best_score < t.floor:
        return verdict(view.node, f"no candidate above {t.floor:.2f} (best {label} {best_score:.2f})")
    if phase == "redispatch":
        # The specialist judged the message out of its scope: triage routes it on when a candidate matches
        # well enough to switch on the encoder alone; otherwise triage keeps it (and answers or asks).
        if best_score >= t.switch:
            return verdict(best, f"hand-back: {label} {best_score:.2f}")
        return verdict(view.node, f"hand-back: nothing clear ({label} {best_score:.2f})")
    need = t.human_switch if best == HUMAN else t.switch
    margin = t.root_margin if view.node == view.root and best != HUMAN else t.margin
    switch_clear = best_score - stay >= margin and best_score >= need
    which_clear = best_score - second_score >= t.which_gap
    if switch_clear and which_clear:
        return verdict(best, f"{label} {best_score:.2f} vs stay {stay:.2f}")
    if best_score - stay <= t.stay_margin:
        return verdict(view.node, f"stay {stay:.2f} >= {label} {best_score:.2f}")
    if best_score >= need and best_score - stay >= margin / 2:
        without_model = Verdict(best, f"{label} {best_score:.2f} vs stay {stay:.2f} (no model)")
    else:
        without_model = Verdict(
            view.node, f"unclear, no model: stay ({label} {best_score:.2f} vs {stay:.2f})"
        )
    closest = (
        Verdict(best, f"{label} {best_score:.2f} vs stay {stay:.2f} (closest)") if switch_clear else None
    )
    return Judgement(scores, best, note, None, Unclear(best, label, closest, without_model))
