"""The routing graph of one assistant: nodes (triage + scenarios), directed edges, global nodes, and per-node
routing settings (mode, timing, history window, rules, router model, examples).

Plain dataclasses, no Django. `captain.routing.services.routing` builds a `Graph` from the database; the routing
benchmark builds one from a JSON Lines dataset; tests build them by hand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

TRIAGE = "assistant"
"""Key of the triage node (the assistant itself); the same key as `captain.assistants.models.TRIAGE_KEY`."""
HUMAN = "human"
"""Pseudo-node: the conversation is handed to people. Reachable from every node unless a graph says otherwise."""

Mode = Literal["tool", "router", "custom", "semantic"]
Timing = Literal["after_input", "after_reply", "both"]
MatchKind = Literal["exact", "contains", "regex"]

MODES: tuple[str, ...] = ("tool", "router", "custom", "semantic")
TIMINGS: tuple[str, ...] = ("after_input", "after_reply", "both")
MATCH_KINDS: tuple[str, ...] = ("exact", "contains", "regex")
DEFAULT_MODE: Mode = "semantic"
DEFAULT_HISTORY_ROUNDS = 2
MAX_HISTORY_ROUNDS = 20


class GraphError(ValueError):
    """The graph is invalid; the message says which node, edge or rule and why."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


@dataclass(frozen=True)
class Rule:
    """A condition that needs no model: the customer's message equals / contains / matches -> go to `to`."""

    match: MatchKind
    value: str
    """Text to compare with (exact and contains ignore case and surrounding blanks) or a Python regex."""
    to: str
    """Target node key; must be a candidate of the node that owns the rule."""

    def matches(self, message: str) -> bool:
        text = message.strip()
        if self.match == "exact":
            return text.casefold() == self.value.strip().casefold()
        if self.match == "contains":
            return bool(self.value.strip()) and self.value.strip().casefold() in text.casefold()
        try:
            return re.search(self.value, text) is not None
        except re.error:
            return False


@dataclass(frozen=True)
class RouterEndpoint:
    """A dedicated router model (mode router/custom). Empty fields fall back to the host's defaults.
    `endpoint` is a name the host resolves (never a URL: the host decides where its keys may go)."""

    model: str = ""
    endpoint: str = ""


@dataclass
class Node:
    """One agent of the team as the router sees it."""

    key: str
    title: str
    description: str = ""
    """When to route here (Coze's "scenarios" / Chatwoot's scenario description)."""
    examples: list[str] = field(default_factory=list)
    """Builder-given phrases customers use for this node; the semantic router compares messages with them."""
    mode: Mode | None = None
    """None: the graph's default mode."""
    timing: Timing = "after_input"
    history_rounds: int | None = None
    """Customer rounds of history a router model sees; None: the graph's default."""
    rule_prompt: str = ""
    """Builder-written instruction for a custom router (mode custom); placed after the history."""
    rules: list[Rule] = field(default_factory=list)
    router: RouterEndpoint = field(default_factory=RouterEndpoint)
    is_global: bool = False
    """Reachable from every node (e.g. "restart"), in addition to the edges."""
    terminal: bool = False
    """Nothing routes away from it (the human pseudo-node)."""


@dataclass
class Graph:
    nodes: dict[str, Node]
    edges: set[tuple[str, str]]
    root: str = TRIAGE
    default_mode: Mode = DEFAULT_MODE
    default_history_rounds: int = DEFAULT_HISTORY_ROUNDS
    max_hops: int = 3
    """Automatic hops allowed per customer message (after-reply jumps and the hand-back re-dispatch)."""
    router: RouterEndpoint = field(default_factory=RouterEndpoint)
    """Graph-wide router model, used by router/custom/semantic nodes that name none."""

    # ---- construction ------------------------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        nodes: list[Node],
        edges: list[tuple[str, str]] | None = None,
        *,
        root: str = TRIAGE,
        global_keys: list[str] | None = None,
        human: Node | None = None,
        default_mode: Mode = DEFAULT_MODE,
        default_history_rounds: int = DEFAULT_HISTORY_ROUNDS,
        max_hops: int = 3,
        router: RouterEndpoint | None = None,
        validate: bool = True,
    ) -> Graph:
        """`edges=None` means the default star (root <-> every other node). `human` (default: a built-in node)
        is added as a global terminal node unless a node with that key exists."""
        by_key: dict[str, Node] = {}
        errors: list[str] = []
        for node in nodes:
            if node.key in by_key:
                errors.append(f"duplicate node key {node.key!r}")
            by_key[node.key] = node
        if root not in by_key:
            errors.append(f"the root node {root!r} is missing")
        if HUMAN not in by_key:
            by_key[HUMAN] = human or default_human_node()
        if edges is None:
            edge_set = {(root, k) for k in by_key if k not in (root, HUMAN)}
            edge_set |= {(k, root) for k in by_key if k not in (root, HUMAN)}
        else:
            edge_set = {(a, b) for a, b in edges}
        for key in global_keys or []:
            if key in by_key:
                by_key[key].is_global = True
            else:
                errors.append(f"global node {key!r} is not a node of the graph")
        graph = cls(
            nodes=by_key,
            edges=edge_set,
            root=root,
            default_mode=default_mode,
            default_history_rounds=default_history_rounds,
            max_hops=max_hops,
            router=router or RouterEndpoint(),
        )
        if validate:
            errors += graph.problems()
        if errors:
            raise GraphError(errors)
        return graph

    def problems(self) -> list[str]:
        """Every reason this graph is invalid (empty when valid)."""
        errors: list[str] = []
        for a, b in sorted(self.edges):
            for end in (a, b):
                if end not in self.nodes:
                    errors.append(f"edge {a} -> {b}: unknown node {end!r}")
            if a == b:
                errors.append(f"edge {a} -> {b}: a node cannot route to itself")
        for node in self.nodes.values():
            if node.mode is not None and node.mode not in MODES:
                errors.append(f"node {node.key!r}: unknown mode {node.mode!r} (one of {', '.join(MODES)})")
            if node.timing not in TIMINGS:
                errors.append(
                    f"node {node.key!r}: unknown timing {node.timing!r} (one of {', '.join(TIMINGS)})"
                )
            if node.history_rounds is not None and not 0 <= node.history_rounds <= MAX_HISTORY_ROUNDS:
                errors.append(f"node {node.key!r}: history_rounds must be between 0 and {MAX_HISTORY_ROUNDS}")
            allowed = set(self.candidates(node.key)) if node.key in self.nodes else set()
            for i, rule in enumerate(node.rules, start=1):
                if rule.match not in MATCH_KINDS:
                    errors.append(f"node {node.key!r} rule {i}: unknown match {rule.match!r}")
                if rule.match == "regex":
                    try:
                        re.compile(rule.value)
                    except re.error as exc:
                        errors.append(f"node {node.key!r} rule {i}: invalid regex ({exc})")
                if rule.to not in self.nodes:
                    errors.append(f"node {node.key!r} rule {i}: unknown target node {rule.to!r}")
                elif rule.to not in allowed:
                    errors.append(
                        f"node {node.key!r} rule {i}: target {rule.to!r} is not an edge of {node.key!r} "
                        "nor a global node"
                    )
        return errors

    # ---- queries -----------------------------------------------------------------------------------------

    def mode_of(self, key: str) -> Mode:
        return self.nodes[key].mode or self.default_mode

    def history_rounds_of(self, key: str) -> int:
        rounds = self.nodes[key].history_rounds
        return self.default_history_rounds if rounds is None else rounds

    def router_of(self, key: str) -> RouterEndpoint:
        own = self.nodes[key].router
        return RouterEndpoint(
            model=own.model or self.router.model, endpoint=own.endpoint or self.router.endpoint
        )

    def candidates(self, key: str) -> list[str]:
        """Where `key` may route: its outgoing edges, then the global nodes; never itself. Node order is the
        graph's node order, so prompts are stable."""
        if key not in self.nodes or self.nodes[key].terminal:
            return []
        out = {b for a, b in self.edges if a == key}
        return [k for k, n in self.nodes.items() if k != key and (k in out or n.is_global)]

    def is_hand_back(self, source: str, target: str) -> bool:
        """A jump back to the triage node: triage may route the same message on once."""
        return target == self.root and source != self.root


def default_human_node() -> Node:
    return Node(
        key=HUMAN,
        title="Human agent",
        description="The customer asks to talk to a real person, a human agent, staff or customer service "
        "representative instead of the bot.",
        examples=[
            "I want to talk to a real person",
            "let me speak to a human agent please",
            "转人工",
            "我要找人工客服",
        ],
        is_global=True,
        terminal=True,
    )
