"""The record of one routing decision: what was offered, what was asked, what came back, what was done.

Built once, at the end of a decision, and never changed: the span, the decision row, the run event and the
benchmark's `--decisions` lines all read the same immutable record."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Phase = Literal["after_input", "after_reply", "redispatch"]


@dataclass(frozen=True)
class Decision:
    """One routing decision at one node. `target == node` means stay."""

    node: str
    """Node that was in charge when the decision was taken."""
    phase: Phase
    """after_input (the customer's message), after_reply (the node's own reply) or redispatch (triage routes a
    message a specialist handed back)."""
    mode: str
    """How it was decided: rule, semantic, semantic+model, router, custom, tool, coze, none."""
    candidates: list[str]
    """Node keys offered (the node's edges plus global nodes); any other target is refused."""
    target: str
    """Node in charge after the decision."""
    reason: str = ""
    """Why, in a few words (the rule that matched, the score margin, 'unparseable output: stay'...)."""
    prompt: str = ""
    """Prompt sent to the router model (empty when no model was asked)."""
    raw_output: str = ""
    """The model's raw output (empty when no model was asked)."""
    parsed: str | None = None
    """What the output or the encoder pointed at before validation (may be outside the candidates)."""
    refused: bool = False
    """The model chose something outside the candidates (or unparseable): refused, the node stays."""
    out_of_candidates: bool = False
    """The decision was APPLIED although its target is not a candidate (only the Coze replica does this)."""
    scores: dict[str, float] = field(default_factory=dict)
    """Encoder similarity per node (semantic routing)."""
    also: str | None = None
    """The message asked about a second topic this node leads to (`multi`): the node in charge is told."""
    model: str = ""
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: float = 0.0

    @property
    def switched(self) -> bool:
        return self.target != self.node

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["switched"] = self.switched
        return data
