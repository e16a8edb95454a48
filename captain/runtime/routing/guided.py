"""Router and custom modes guided by the encoder's evidence: the router model chooses only among what the
evidence allows.

A small router model asked to pick among every candidate picks one, often the wrong one (on descriptions-only
graphs the bundled 0.5B model scored router-mode nodes 21 points below a plain nearest-description router). So
on a customer's message (after input, or a hand-back re-dispatched by triage) the semantic judgement
(`semantic.judge`) comes first:

- the customer asks for a person: people, no model call (as in every mode);
- no candidate has evidence above the floor, or none beats the node in charge: stay, no model call;
- a clear switch in `router` mode: switch, no model call (a model that said "stay" would be overruled);
- in `custom` mode a clear switch is put to the model with the builder's rule, because the rule may keep the
  message ("stay on claims for tracking numbers"); the model sees stay and the shortlist only;
- an unclear case: the model chooses between staying and the shortlist (the candidates whose evidence reaches
  the floor and lies within `margin` of the best, at most `shortlist` of them); in `router` mode, when switching
  itself is clear and only the target is not, a "stay" answer is vetoed for the encoder's best.

The node's own reply (the `after_reply` phase) is the builder's timing machinery ("after AI players speak, go
to voting"): there the model chooses among all candidates as configured, with only the people check.
"""

from __future__ import annotations

from dataclasses import replace

from .decision import Decision
from .request import DecisionRequest, Router
from .router_mode import decide_by_router
from .semantic import Judgement
from .thresholds import RoutingThresholds
from .view import RoutingView


def shortlist(judgement: Judgement, t: RoutingThresholds, size: int) -> list[str]:
    """Candidates the model may pick: evidence at least the floor and within `t.margin` of the best."""
    if not judgement.ranked:
        return []
    top = judgement.ranked[0][1]
    return [k for k, ev in judgement.ranked if ev >= t.floor and top - ev <= t.margin][:size]


def decide_guided(
    request: DecisionRequest,
    view: RoutingView,
    mode: str,
    router: Router | None,
    judgement: Judgement,
    t: RoutingThresholds,
    *,
    size: int,
) -> Decision:
    """The decision of a `router` or `custom` node on a customer's message, given the message's judgement."""

    def by_evidence(target: str, reason: str) -> Decision:
        note = f"; {judgement.note}" if judgement.note else ""
        return Decision(
            node=request.node,
            phase=request.phase,
            mode=mode,
            candidates=list(view.candidates),
            target=target,
            reason=f"evidence: {reason}{note}",
            parsed=judgement.best,
            scores=judgement.scores,
        )

    verdict = judgement.verdict
    # Unclear which candidate, but clear that the message moves on: in router mode a "stay" is vetoed below.
    only_target_unclear = judgement.unclear is not None and judgement.unclear.closest is not None
    if verdict is not None:
        clear_stay_or_people = verdict.target == view.node or verdict.target in view.terminal
        if clear_stay_or_people or mode == "router":
            return by_evidence(verdict.target, verdict.reason)
        # Custom mode, a clear switch: the builder's rule may keep the message, so the model is asked.
        allowed = [verdict.target, *(k for k in shortlist(judgement, t, size) if k != verdict.target)][:size]
    else:
        allowed = shortlist(judgement, t, size)
    if not allowed:
        return by_evidence(view.node, "no candidate reaches the floor")
    if router is None and judgement.unclear is not None:
        # No router model configured: the evidence alone, as a semantic node without a model decides.
        fallback = judgement.unclear.without_model
        return by_evidence(fallback.target, f"no router model configured; {fallback.reason}")
    decision = decide_by_router(request, view, mode, router, candidates=allowed, scores=judgement.scores)
    decision = replace(
        decision, scores=judgement.scores, reason=f"{decision.reason} (offered: {', '.join(allowed)})"
    )
    if mode == "router" and only_target_unclear and decision.target == view.node and not decision.refused:
        # The model kept a message the evidence clearly moves on: the encoder's best.
        return replace(
            decision, target=allowed[0], reason=f"{decision.reason}; stay vetoed: switching is clear"
        )
    return decision
