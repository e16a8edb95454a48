"""`baseline-nearest`: the floor every strategy is compared with. The plainest router that could work: compare
the customer's message with "title: description" of the node in charge and of each candidate (no example
phrases, no model, nothing tuned), and switch to the best candidate when it beats the node in charge by a
small margin. It never hands to people by similarity (only a builder's rule can). The builder's exact-match rules still apply (they are configuration, not routing skill); a
hand-back to triage is re-dispatched once by the dispatcher, as for every strategy.
"""

from __future__ import annotations

from dataclasses import dataclass

from captain.runtime.routing import Decision, DecisionRequest, Encoder
from captain.runtime.routing.request import stay
from captain.runtime.routing.rules import match_rules

MARGIN = 0.03
"""Fixed, not tuned: "clearly more similar than staying" in the smallest sense."""


def _text(request: DecisionRequest, key: str) -> str:
    node = request.graph.nodes[key]
    return f"{node.title}: {node.description}".strip().rstrip(":")


@dataclass(frozen=True)
class NearestStrategy:
    encoder: Encoder
    margin: float = MARGIN
    name: str = "baseline-nearest"

    def decide(self, request: DecisionRequest) -> Decision:
        candidates = request.candidates()
        ruled = match_rules(request)
        if ruled is not None:
            return ruled
        # People are not a topic to be nearest to: a floor that hands to people on similarity alone jumps
        # there on a fifth to a third of ordinary turns and never comes back, which would make it no floor.
        candidates = [k for k in candidates if not request.graph.nodes[k].terminal]
        if not candidates:
            return stay(request, "none", "no candidates")
        keys = [request.node, *candidates]
        vectors = self.encoder.encode([request.message, *(_text(request, k) for k in keys)])
        sims = {k: float(s) for k, s in zip(keys, vectors[1:] @ vectors[0], strict=True)}
        best = max(candidates, key=lambda k: sims[k])
        switch = sims[best] - sims[request.node] >= self.margin
        return Decision(
            node=request.node,
            phase=request.phase,
            mode="nearest",
            candidates=candidates,
            target=best if switch else request.node,
            reason=f"{best} {sims[best]:.2f} vs stay {sims[request.node]:.2f}",
            parsed=best,
            scores={k: round(v, 4) for k, v in sims.items()},
        )
