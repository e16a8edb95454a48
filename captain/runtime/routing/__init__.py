"""Routing between the agents of a team: the graph, the strategies that decide, the per-message dispatch and
the record of every decision. No Django; the encoder and the router models are injected."""

from .decision import Decision
from .dispatch import COZE_POLICY, DispatchResult, Policy, dispatch_message
from .graph import HUMAN, TRIAGE, Graph, GraphError, Node, RouterEndpoint, Rule, default_human_node
from .model import OpenAIRouterModel, RouterModel, RouterResponse
from .prompts import Turn, coze_prompt, router_messages, window
from .strategies import CozeStrategy, DecisionRequest, Encoder, OursStrategy, SemanticSettings, Strategy

__all__ = [
    "COZE_POLICY",
    "HUMAN",
    "TRIAGE",
    "CozeStrategy",
    "Decision",
    "DecisionRequest",
    "DispatchResult",
    "Encoder",
    "Graph",
    "GraphError",
    "Node",
    "OpenAIRouterModel",
    "OursStrategy",
    "Policy",
    "RouterEndpoint",
    "RouterModel",
    "RouterResponse",
    "Rule",
    "SemanticSettings",
    "Strategy",
    "Turn",
    "coze_prompt",
    "default_human_node",
    "dispatch_message",
    "router_messages",
    "window",
]
