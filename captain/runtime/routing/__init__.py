"""Routing between the agents of a team: the graph, the strategy that decides (rules, semantic scoring, the
tie-break, router modes), the per-message dispatch and the record of every decision. No Django; the encoder
and the router models are injected (the router calls the same `ModelClient` as the agents)."""

from .decision import Decision
from .dispatch import DispatchResult, Policy, dispatch_message
from .graph import HUMAN, TRIAGE, Graph, GraphError, Node, RouterEndpoint, Rule, default_human_node
from .request import DecisionRequest, Router, RouterFactory, Strategy
from .scoring import Encoder
from .strategy import OursStrategy
from .thresholds import RoutingThresholds
from .tiebreak import TieBreak
from .turns import Turn, window
from .view import RoutingView, routing_view

__all__ = [
    "HUMAN",
    "TRIAGE",
    "Decision",
    "DecisionRequest",
    "DispatchResult",
    "Encoder",
    "Graph",
    "GraphError",
    "Node",
    "OursStrategy",
    "Policy",
    "Router",
    "RouterEndpoint",
    "RouterFactory",
    "RoutingThresholds",
    "RoutingView",
    "Rule",
    "Strategy",
    "TieBreak",
    "Turn",
    "default_human_node",
    "dispatch_message",
    "routing_view",
    "window",
]
