"""The routing view: what one decision needs to know about the graph, computed once per decision.

Prompt builders and scorers read the view, never the graph: the candidates (after exclusions), how each one is
described and named in a question, the documents the encoder compares the message with, and the history
windows already written out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .graph import Graph, Node
from .request import DecisionRequest
from .turns import render_history, window

GENERAL_TOPIC = "general questions, greetings, nothing specific yet"
"""Triage's topic in the tie-break questions (triage is not a topic of its own)."""
HAND_BACK_TOPIC = "a different topic or a general question"
"""How the tie-break questions name triage when a specialist's best option is to hand the message back."""


def describe(node: Node) -> str:
    return f"{node.title}: {node.description}".strip().rstrip(":")


@dataclass(frozen=True)
class RoutingView:
    node: str
    """Node in charge."""
    root: str
    """The triage node of the graph."""
    title: str
    description: str
    topic: str
    """The node's topic as the tie-break questions put it ("Topic A", "Current topic")."""
    rule_prompt: str
    """The builder's instruction for a custom router (empty otherwise)."""
    candidates: tuple[str, ...]
    """Where the node may route (edges + global nodes, minus exclusions), in graph order."""
    descriptions: Mapping[str, str]
    """Candidate -> "Title: description" (router options)."""
    other_topics: Mapping[str, str]
    """Candidate -> how a tie-break question names it ("Topic B")."""
    terminal: frozenset[str]
    """Candidates control never comes back from (people)."""
    reach: Mapping[str, str]
    """Nodes scored for a specialist through its way back to triage: key -> the triage node. Empty at triage
    and when triage is not a candidate."""
    documents: Mapping[str, tuple[str, ...]]
    """Node, candidate or reached node -> texts the encoder compares the message with."""
    scenarios: Mapping[str, tuple[str, ...]]
    """Every scenario of the assistant (not triage, not people) -> its texts: what the assistant covers
    (`scope`)."""
    recent: str
    """The node's history window (`history_rounds` customer rounds), written out for a router prompt."""
    last_round: str
    """At most the last customer round, written out for the tie-break questions."""


def _documents(graph: Graph, key: str) -> tuple[str, ...]:
    node = graph.nodes[key]
    docs = list(node.examples)
    if key == graph.root:
        # Triage holds what no scenario covers: greetings and questions about the business itself.
        if node.description:
            docs.insert(0, node.description)
    elif node.description or node.title:
        docs.insert(0, describe(node))
    return tuple(docs)


def routing_view(request: DecisionRequest) -> RoutingView:
    graph, node = request.graph, request.current
    candidates = request.candidates()
    reach: dict[str, str] = {}
    if graph.root in candidates:
        scored = {node.key, *candidates}
        for key in graph.candidates(graph.root):
            if key not in scored and key not in request.exclude:
                scored.add(key)
                reach[key] = graph.root
    titles = {key: n.title for key, n in graph.nodes.items()}
    rounds = graph.history_rounds_of(node.key)
    hand_back = node.key != graph.root
    return RoutingView(
        node=node.key,
        root=graph.root,
        title=node.title,
        description=node.description,
        topic=GENERAL_TOPIC if node.key == graph.root else describe(node),
        rule_prompt=node.rule_prompt,
        candidates=tuple(candidates),
        descriptions={key: describe(graph.nodes[key]) for key in candidates},
        other_topics={
            key: HAND_BACK_TOPIC if key == graph.root and hand_back else describe(graph.nodes[key])
            for key in candidates
        },
        terminal=frozenset(key for key in candidates if graph.nodes[key].terminal),
        reach=reach,
        documents={key: _documents(graph, key) for key in [node.key, *candidates, *reach]},
        scenarios={
            key: _documents(graph, key)
            for key, n in graph.nodes.items()
            if key != graph.root and not n.terminal
        },
        recent=render_history(window(request.history, rounds), titles),
        last_round=render_history(window(request.history, min(rounds, 1)), titles),
    )
