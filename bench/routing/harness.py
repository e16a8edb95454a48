"""The benchmark's harness: replay labelled conversations through each strategy, on one model.

Two passes per strategy:
- free-running: each strategy carries its own node from turn to turn (errors compound, as in production);
- teacher-forced: every turn starts at the node the previous turn expected (each decision scored alone).
The history every router sees is the dataset's (customer turns + canned replies), so strategies differ only in
how they route. Each turn runs through the product's `TeamRunner` (captain.runtime.team), with the dataset's
replies standing in for the agents.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TextIO

from captain.runtime.routing import (
    Decision,
    DecisionRequest,
    Encoder,
    Graph,
    OursStrategy,
    Policy,
    RouterFactory,
    RoutingThresholds,
    Strategy,
    TieBreak,
    Turn,
)
from captain.runtime.team import Team, TeamRunner, TurnInput
from captain.runtime.types import Reply, RunError, RunResult, Usage

from .coze import COZE_POLICY, CozeStrategy
from .dataset import ROOT, graph_from_dataset
from .figures import PassResult, StrategyResult, TurnRecord
from .nearest import NearestStrategy

STRATEGIES = ("ours", "ours-pair", "ours-nomodel", "coze", "baseline-nearest")


@dataclass
class _CannedAnswer:
    """The replay's answerer: the dataset's reply (or one short generated one) for the first node that answers
    a customer turn; later nodes of the same turn get none, so every strategy sees the same history."""

    graph: Graph
    canned: str | None
    reply_for: Callable[[Graph, str, list[Turn]], str] | None
    used: bool = False

    def __call__(self, node: str, messages: list[dict[str, Any]]) -> RunResult:
        if self.used:
            return RunResult(
                RunError("empty_reply", "one reply per customer turn in the replay"), node, Usage(), [node]
            )
        self.used = True
        if self.canned:
            text = self.canned
        elif self.reply_for is not None:
            text = self.reply_for(self.graph, node, [Turn(m["role"], m["content"]) for m in messages])
        else:
            text = f"({self.graph.nodes[node].title})"
        return RunResult(Reply(text), node, Usage(), [node])


def build_strategy(
    name: str,
    *,
    encoder: Encoder | None,
    router_for: RouterFactory,
    tool_decider: Callable[[DecisionRequest], Decision] | None,
) -> tuple[Strategy, Policy]:
    if name in ("ours", "ours-pair"):
        # "ours": the product's default (one router call per message at most: the A-or-B question);
        # "ours-pair": a budget of two calls, so unclear cases get the two yes/no questions.
        thresholds = RoutingThresholds(ab_offset=float(os.environ.get("CAPTAIN_ROUTER_AB_OFFSET", "0.6")))
        return (
            OursStrategy(
                encoder=encoder,
                routers=router_for,
                tool_decider=tool_decider,
                thresholds=thresholds,
                name=name,
            ),
            Policy(model_calls=2 if name == "ours-pair" else 1),
        )
    if name == "ours-nomodel":
        return (
            OursStrategy(
                encoder=encoder,
                routers=router_for,
                tool_decider=tool_decider,
                tiebreak=TieBreak.NONE,
                name=name,
            ),
            Policy(),
        )
    if name == "coze":
        return CozeStrategy(routers=router_for), COZE_POLICY
    if name == "baseline-nearest":
        if encoder is None:
            raise ValueError("baseline-nearest needs the encoder")
        return NearestStrategy(encoder), Policy(model_calls=0)
    raise ValueError(f"unknown strategy {name!r} (one of {', '.join(STRATEGIES)})")


def run_pass(
    conversations: list[dict[str, Any]],
    strategy: Strategy,
    policy: Policy,
    *,
    forced: bool,
    progress: TextIO | None = None,
    label: str = "",
    reply_for: Callable[[Graph, str, list[Turn]], str] | None = None,
) -> PassResult:
    result = PassResult()
    for n, conv in enumerate(conversations, start=1):
        graph = graph_from_dataset(conv)
        node = previous = ROOT
        history: list[Turn] = []
        started = time.monotonic()
        for i, turn in enumerate(conv["turns"], start=1):
            start = node
            canned = turn.get("assistant")
            answer = _CannedAnswer(graph, canned, reply_for)
            runner = TeamRunner(
                team=Team(agents={}, graph=graph), strategy=strategy, answer=answer, policy=policy
            )
            chat = [{"role": t.role, "content": t.content, "agent": t.agent} for t in history]
            out = runner.run(TurnInput(history=chat, batch=[turn["user"]], current=start)).dispatch
            result.turns.append(
                TurnRecord(
                    conv.get("id", str(n)),
                    i,
                    start,
                    turn["expect"],
                    out.node,
                    out.route,
                    out.decisions,
                    previous=previous,
                    multi=tuple(turn.get("multi") or ()),
                )
            )
            previous = turn["expect"]
            # The next turn's history: the dataset's words, attributed to whoever was in charge.
            in_charge = turn["expect"] if forced else out.node
            history = [*history, Turn("user", turn["user"])]
            reply_text = out.replies[0][1] if out.replies else (canned or "")
            if reply_text:
                history.append(Turn("assistant", reply_text, in_charge if in_charge in graph.nodes else ROOT))
            node = turn["expect"] if forced else out.node
            if node not in graph.nodes:
                node = ROOT
        if progress is not None:
            ok = sum(t.correct for t in result.turns if t.conversation == conv.get("id", str(n)))
            progress.write(
                f"  [{label}] {n}/{len(conversations)} {conv.get('id')}: {ok}/{len(conv['turns'])} "
                f"({time.monotonic() - started:.1f}s)\n"
            )
            progress.flush()
    return result


def run_benchmark(
    conversations: list[dict[str, Any]],
    strategies: Iterable[str],
    *,
    encoder: Encoder | None,
    router_for: RouterFactory,
    tool_decider: Callable[[DecisionRequest], Decision] | None = None,
    reply_for: Callable[[Graph, str, list[Turn]], str] | None = None,
    passes: tuple[str, ...] = ("free", "forced"),
    progress: TextIO | None = sys.stderr,
) -> list[StrategyResult]:
    results = []
    for name in strategies:
        strategy, policy = build_strategy(
            name, encoder=encoder, router_for=router_for, tool_decider=tool_decider
        )
        started = time.monotonic()
        free = (
            run_pass(
                conversations,
                strategy,
                policy,
                forced=False,
                progress=progress,
                label=f"{name} free",
                reply_for=reply_for,
            )
            if "free" in passes
            else PassResult()
        )
        forced = (
            run_pass(
                conversations,
                strategy,
                policy,
                forced=True,
                progress=progress,
                label=f"{name} forced",
                reply_for=reply_for,
            )
            if "forced" in passes
            else PassResult()
        )
        results.append(StrategyResult(name, free, forced, time.monotonic() - started))
    return results
