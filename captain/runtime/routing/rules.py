"""Exact-match rules: the first rule of the node that matches the customer's message decides, no model."""

from __future__ import annotations

from .decision import Decision
from .request import DecisionRequest


def match_rules(request: DecisionRequest) -> Decision | None:
    """The first rule of the node that matches the message and targets a candidate; None when none does."""
    candidates = request.candidates()
    for i, rule in enumerate(request.current.rules, start=1):
        if rule.matches(request.message):
            if rule.to not in candidates:
                continue  # validation refuses such rules; a graph edited since must not jump off its edges
            return Decision(
                node=request.node,
                phase=request.phase,
                mode="rule",
                candidates=candidates,
                target=rule.to,
                parsed=rule.to,
                reason=f"rule {i}: {rule.match} {rule.value!r}",
            )
    return None
