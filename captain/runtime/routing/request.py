"""What a routing strategy is asked, and what it must answer: one decision at one node."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ..model import ModelClient
from .decision import Decision, Phase
from .graph import Graph, Node, RouterEndpoint
from .turns import Turn

Router = tuple[ModelClient, str]
"""A router model: the client to call and the model name to ask for."""

RouterFactory = Callable[[RouterEndpoint], "Router | None"]
"""Endpoint of a node -> its router model, or None when no router model is configured."""


@dataclass(frozen=True)
class DecisionRequest:
    graph: Graph
    node: str
    message: str
    history: list[Turn]
    """Conversation before `message` (after_reply: including the message and the node's reply)."""
    phase: Phase
    model_budget: int = 1
    """Router model calls this decision may still spend on the customer's message (the policy's per-message
    budget minus what earlier decisions spent); 0: decide from rules and embeddings only."""
    exclude: frozenset[str] = frozenset()
    """Candidates not to offer (the specialist that just handed the message back)."""

    @property
    def current(self) -> Node:
        return self.graph.nodes[self.node]

    def candidates(self) -> list[str]:
        return [k for k in self.graph.candidates(self.node) if k not in self.exclude]


class Strategy(Protocol):
    """Decides one routing decision (`OursStrategy`; the benchmark's Coze replica; a wrapper that observes)."""

    def decide(self, request: DecisionRequest) -> Decision: ...


def stay(request: DecisionRequest, mode: str, reason: str) -> Decision:
    """The node keeps the message; nothing was asked."""
    return Decision(
        node=request.node,
        phase=request.phase,
        mode=mode,
        candidates=request.candidates(),
        target=request.node,
        reason=reason,
    )
