"""The semantic router's judgement: evidence in (`calibration`), a verdict out. A pure function: no model, no
encoder. Every comparison is relative: a candidate against the node in charge, the best against the second.

1. People: only when the customer asks for a person (`people`); otherwise they are set aside for the decision.
2. A specialist's way back to triage is worth what triage could route the message to ("reach").
3. Triage's own job (`scope`): at triage, a message closer to a topic none of the scenarios covers than to the
   best scenario by `scope_margin` stays; a specialist hands it back when it beats its own topic and every other
   by `scope_margin + margin`. Otherwise, best candidate below the evidence `floor`: stay.
4. A clear switch (margin over staying, gap to the second): switch. Not better than staying: stay.
5. Anything else is unclear: the caller puts it to a tie-break (a model) or, without one, decides on the
   evidence alone with half the margin.
"""

from __future__ import annotations

from dataclasses import dataclass

from .calibration import Evidence
from .decision import Phase
from .people import PeopleCheck
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
    """Every similarity (4 decimals) and, under `evidence:<node>`, every evidence (recorded on the decision)."""
    best: str
    """The encoder's best candidate, after a terminal node was set aside (recorded as `parsed`)."""
    note: str
    """Appended to the decision's reason ("human set aside: ..."), or empty."""
    verdict: Verdict | None
    """The decision when it is clear; None when it is `unclear`."""
    unclear: Unclear | None = None
    ranked: tuple[tuple[str, float], ...] = ()
    """Candidates other than people with their evidence (through triage's reach where higher), best first."""


def judge(
    view: RoutingView,
    phase: Phase,
    t: RoutingThresholds,
    measured: Evidence,
    people: PeopleCheck | None = None,
    scope: float = float("-inf"),
) -> Judgement:
    """`measured`: the message's evidence for the node itself, each candidate and each reached node; `people`:
    the people check, when people are among the candidates; `scope`: the message's evidence for the requests no
    scenario covers (`scope`), triage's own job (-inf: not measured, where triage cannot take the message)."""
    ev = measured.evidence
    effective = {k: ev[k] for k in view.candidates}
    via: dict[str, str] = {}
    for key, through in view.reach.items():
        if ev[key] > effective[through]:
            effective[through] = ev[key]
            via[through] = key
    stay = ev[view.node]
    scores = {k: round(v, 4) for k, v in measured.raw.items()}
    scores.update({f"evidence:{k}": round(v, 2) for k, v in ev.items() if v != float("-inf")})
    note = ""
    terminal = [k for k in effective if k in view.terminal]
    if terminal:
        if people is not None and people.asks:
            return Judgement(scores, terminal[0], "", Verdict(terminal[0], people.reason))
        for key in terminal:
            del effective[key]
        note = f"people set aside: {people.reason}" if people is not None else ""
        if not effective:
            return Judgement(scores, view.node, note, Verdict(view.node, "no candidate but people"))
    ranked = sorted(effective.items(), key=lambda kv: -kv[1])
    best, best_score = ranked[0]
    second_score = ranked[1][1] if len(ranked) > 1 else float("-inf")
    label = f"{best} (via {via[best]})" if best in via else best

    def verdict(target: str, reason: str) -> Judgement:
        return Judgement(scores, best, note, Verdict(target, reason), None, tuple(ranked))

    # Triage's own job: a topic none of the scenarios covers. Triage keeps it (also when a specialist handed it
    # back). A specialist hands it back when it is closer to that than to its own topic and any other by the
    # margin any switch from it needs on top of triage's, even when no scenario reaches the floor.
    uncovered = f"a topic no scenario covers {scope:.1f} vs {label} {best_score:.1f}"
    if view.node == view.root and best_score >= t.floor and scope - best_score >= t.scope_margin:
        return verdict(view.node, uncovered)
    back = t.scope_margin + t.margin
    if view.root in effective and scope >= t.floor and scope - max(best_score, stay) >= back:
        return verdict(view.root, f"{uncovered}, stay {stay:.1f}")
    if best_score < t.floor:
        return verdict(view.node, f"no candidate with evidence {t.floor:.1f} (best {label} {best_score:.1f})")
    if phase == "redispatch":
        # The specialist judged the message out of its scope: triage routes it on to a candidate with enough
        # evidence (checked above); it never goes straight back (the dispatcher excludes that specialist).
        return verdict(best, f"hand-back: {label} {best_score:.1f}")
    margin = t.root_margin if view.node == view.root else t.margin
    switch_clear = best_score - stay >= margin
    which_clear = best_score - second_score >= t.which_gap
    if switch_clear and which_clear:
        return verdict(best, f"{label} {best_score:.1f} vs stay {stay:.1f}")
    if best_score - stay <= t.stay_margin:
        return verdict(view.node, f"stay {stay:.1f} >= {label} {best_score:.1f}")
    if best_score - stay >= margin / 2:
        without_model = Verdict(best, f"{label} {best_score:.1f} vs stay {stay:.1f} (no model)")
    else:
        without_model = Verdict(
            view.node, f"unclear, no model: stay ({label} {best_score:.1f} vs {stay:.1f})"
        )
    closest = (
        Verdict(best, f"{label} {best_score:.1f} vs stay {stay:.1f} (closest)") if switch_clear else None
    )
    return Judgement(scores, best, note, None, Unclear(best, label, closest, without_model), tuple(ranked))
