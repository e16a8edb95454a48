"""Per-message dispatch: which node handles the customer's message, and where control goes after its reply.

    result = dispatch_message(graph, strategy, current="refunds", message=text, history=turns,
                              respond=lambda node, history: reply_text)

Our rules (each has a test in tests/captain/routing):
- a node checks "after input" only on a NEW customer message: a node reached by a forward jump handles the
  message that caused the jump, and its own input check waits for the next message (no slide);
- a hand-back to triage re-dispatches the same message once, so triage may route it on to the right
  specialist in the same turn (never straight back to the node that handed it back);
- "after reply" checks run after the node in charge has answered, so a node can hand over without waiting;
- automatic hops per message are bounded (`graph.max_hops`), and so are the router model calls a semantic
  decision may spend (`model_calls`).

`Policy(slide=True, redispatch=False)` reproduces Coze's behaviour for the benchmark: the new node's own
input check runs on the same message, and control slides on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .decision import Decision, Phase
from .graph import Graph
from .request import DecisionRequest, Strategy
from .turns import Turn

Respond = Callable[[str, list[Turn]], "str | tuple[str, str] | None"]
"""(node key, history ending with the customer's message) -> the node's reply text, or (node that actually
answered, text) when the node's own model handed off while answering, or None when it produced no reply."""


@dataclass(frozen=True)
class Policy:
    slide: bool = False
    """Coze: re-check the node a jump reached on the same input."""
    redispatch: bool = True
    """A hand-back to triage re-dispatches the message once."""
    model_calls: int = 1
    """Router model calls the semantic router may spend per customer message (rules, router and custom nodes
    are not limited by it: they are the builder's explicit choice). One by default: a turn never costs more
    than one small router call on top of the reply."""
    max_hops: int | None = None
    """None: the graph's max_hops."""


@dataclass
class DispatchResult:
    start: str
    node: str
    """Node in charge after the message (it continues on the next one)."""
    route: list[str]
    decisions: list[Decision] = field(default_factory=list)
    replies: list[tuple[str, str]] = field(default_factory=list)
    """(node key, text) of every reply written for this message, in order."""
    hops: int = 0

    @property
    def llm_calls(self) -> int:
        return sum(d.llm_calls for d in self.decisions)

    @property
    def input_tokens(self) -> int:
        return sum(d.input_tokens for d in self.decisions)

    @property
    def out_of_candidates(self) -> int:
        return sum(1 for d in self.decisions if d.out_of_candidates)


def _checks(graph: Graph, key: str, phase: str) -> bool:
    node = graph.nodes[key]
    if node.terminal:
        return False
    return node.timing == "both" or node.timing == phase


def dispatch_message(
    graph: Graph,
    strategy: Strategy,
    *,
    current: str,
    message: str,
    history: list[Turn],
    respond: Respond | None = None,
    policy: Policy | None = None,
) -> DispatchResult:
    policy = policy or Policy()
    max_hops = graph.max_hops if policy.max_hops is None else policy.max_hops
    if current not in graph.nodes:
        current = graph.root
    result = DispatchResult(start=current, node=current, route=[current])
    budget = [policy.model_calls]

    def decide(key: str, phase: Phase, turns: list[Turn], exclude: frozenset[str] = frozenset()) -> Decision:
        request = DecisionRequest(
            graph, key, message, turns, phase, model_budget=max(budget[0], 0), exclude=exclude
        )
        decision = strategy.decide(request)
        if decision.mode.startswith("semantic"):
            budget[0] -= decision.llm_calls
        result.decisions.append(decision)
        return decision

    def move(target: str) -> None:
        result.node = target
        result.route.append(target)
        result.hops += 1

    # 1. After input, at the node in charge when the message arrived.
    if _checks(graph, result.node, "after_input"):
        decision = decide(result.node, "after_input", history)
        if decision.switched:
            previous = result.node
            move(decision.target)
            if policy.slide:
                while result.hops < max_hops and _checks(graph, result.node, "after_input"):
                    again = decide(result.node, "after_input", history)
                    if not again.switched:
                        break
                    move(again.target)
            elif (
                policy.redispatch
                and decision.mode != "rule"  # a builder's rule that says "back to triage" means triage
                and graph.is_hand_back(previous, result.node)
                and result.hops < max_hops
            ):
                again = decide(result.node, "redispatch", history, exclude=frozenset({previous}))
                if again.switched:
                    move(again.target)

    # 2. The node in charge answers; after-reply checks may pass control on (each new node answers too).
    turns = [*history, Turn("user", message)]
    while True:
        if graph.nodes[result.node].terminal:
            break
        if respond is not None:
            answered = respond(result.node, turns)
            text: str | None
            if isinstance(answered, tuple):
                by, text = answered
                if by != result.node and by in graph.nodes:
                    move(by)
            else:
                by, text = result.node, answered
            if text:
                result.replies.append((by, text))
                turns = [*turns, Turn("assistant", text, by)]
        if result.hops >= max_hops or not _checks(graph, result.node, "after_reply"):
            break
        decision = decide(result.node, "after_reply", turns)
        if not decision.switched:
            break
        move(decision.target)
    return result
