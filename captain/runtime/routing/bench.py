"""The routing benchmark (no Django): replay labelled conversations through each strategy and score them.

Used by `python manage.py captain_bench_routing`. Dataset: JSON Lines, one conversation per line (docs/routing.md).
Two passes per strategy on the same model:
- free-running: each strategy carries its own node from turn to turn (errors compound, as in production);
- teacher-forced: every turn starts at the node the previous turn expected (each decision scored alone).
The history every router sees is the dataset's (customer turns + canned replies), so strategies differ only in
how they route.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..model import ModelClient
from .decision import Decision
from .dispatch import COZE_POLICY, Policy, dispatch_message
from .graph import Graph, Node, RouterEndpoint, Rule
from .model import RouterModel
from .prompts import Turn
from .strategies import CozeStrategy, DecisionRequest, Encoder, OursStrategy, SemanticSettings, Strategy

ROOT = "triage"
STRATEGIES = ("ours", "ours-pair", "ours-nomodel", "coze")
GROWTH_LATE_TURN = 20


def load_dataset(path: str | Path) -> list[dict[str, Any]]:
    conversations = []
    with Path(path).open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            line = line.strip()
            if not line:
                continue
            try:
                conversations.append(json.loads(line))
            except ValueError as exc:
                raise ValueError(f"{path}:{n}: not JSON ({exc})") from exc
    return conversations


def graph_from_dataset(conv: dict[str, Any]) -> Graph:
    settings = conv.get("nodes") or {}
    assistant = conv.get("assistant") or {}
    nodes = [
        Node(
            key=ROOT, title=assistant.get("name") or "Assistant", description=assistant.get("description", "")
        )
    ]
    for s in conv.get("scenarios", []):
        nodes.append(
            Node(
                key=s["key"],
                title=s.get("title") or s["key"],
                description=s.get("description", ""),
                examples=list(s.get("examples") or []),
            )
        )
    for node in nodes:
        cfg = settings.get(node.key) or {}
        node.mode = cfg.get("mode") or None
        node.timing = cfg.get("timing") or "after_input"
        node.history_rounds = cfg.get("history_rounds")
        node.rule_prompt = cfg.get("rule_prompt", "")
        node.rules = [Rule(match=r["match"], value=r["value"], to=r["to"]) for r in cfg.get("rules", [])]
        node.examples += list(cfg.get("examples") or [])
        router = cfg.get("router") or {}
        node.router = RouterEndpoint(model=router.get("model", ""), endpoint=router.get("endpoint", ""))
    edges = [tuple(e) for e in conv["edges"]] if conv.get("edges") else None
    return Graph.build(nodes, edges, root=ROOT, global_keys=list(conv.get("global") or []))


@dataclass
class TurnRecord:
    conversation: str
    index: int
    """1-based customer turn."""
    start: str
    expect: str
    got: str
    route: list[str]
    decisions: list[Decision]

    @property
    def correct(self) -> bool:
        return self.got == self.expect

    @property
    def slid(self) -> bool:
        """A jump during this turn reached the expected node and control moved on past it (whatever moved it:
        also a designed hand-back re-dispatch from triage that routed on when triage was expected)."""
        return self.expect in self.route[1:-1] and self.got != self.expect

    @property
    def slid_on_same_input(self) -> bool:
        """Coze's fault exactly: a node reached by a jump during this turn checked the same customer message
        again after input and moved on."""
        return any(d.phase == "after_input" and d.node != self.start and d.switched for d in self.decisions)


@dataclass
class PassResult:
    turns: list[TurnRecord] = field(default_factory=list)

    @property
    def accuracy(self) -> float | None:
        if not self.turns:
            return None  # pass not run
        return sum(t.correct for t in self.turns) / len(self.turns)

    def calls(self) -> list[tuple[int, int]]:
        """(turn index, prompt tokens) of every router model call."""
        return [(t.index, d.input_tokens) for t in self.turns for d in t.decisions if d.llm_calls]

    def calls_by_template(self) -> dict[str, list[tuple[int, int]]]:
        """The same, grouped by the kind of prompt (mode, phase, calls per decision): prompts of one template
        differ only by what the history window lets in."""
        groups: dict[str, list[tuple[int, int]]] = {}
        for t in self.turns:
            for d in t.decisions:
                if d.llm_calls:
                    groups.setdefault(f"{d.mode}/{d.phase}/{d.llm_calls}", []).append(
                        (t.index, d.input_tokens)
                    )
        return groups


@dataclass
class StrategyResult:
    name: str
    free: PassResult
    forced: PassResult
    seconds: float = 0.0

    def figures(self) -> dict[str, Any]:
        main = self.free if self.free.turns else self.forced  # cost figures from the free-running pass
        turns = len(main.turns)
        calls = main.calls()
        tokens = sorted(tok for _, tok in calls)
        llm_calls = sum(d.llm_calls for t in main.turns for d in t.decisions)
        rule_turns = [
            t for t in main.turns if any(d.mode == "rule" and d.phase == "after_input" for d in t.decisions)
        ]
        free, forced = self.free.accuracy, self.forced.accuracy
        return {
            "accuracy": None if free is None else round(free, 4),
            "accuracy_teacher_forced": None if forced is None else round(forced, 4),
            "llm_calls_per_turn": round(llm_calls / max(turns, 1), 3),
            "llm_calls_max_per_turn": max(
                (sum(d.llm_calls for d in t.decisions) for t in main.turns), default=0
            ),
            # Model calls spent on turns a rule decided after the input (after-reply checks of the node the rule
            # reached are that node's own business and not counted).
            "llm_calls_on_rule_turns": sum(
                d.llm_calls for t in rule_turns for d in t.decisions if d.phase != "after_reply"
            ),
            "router_prompt_tokens_p50": _percentile(tokens, 50),
            "router_prompt_tokens_p95": _percentile(tokens, 95),
            "router_prompt_growth": growth(calls),
            # The ratio above mixes prompt templates (e.g. short A-or-B questions at turn 2, a game's custom
            # router prompt at turn 20); this one compares each template with itself and keeps the largest.
            "router_prompt_growth_per_template": max(
                (g for g in (growth(c) for c in main.calls_by_template().values()) if g is not None),
                default=None,
            ),
            "slides": sum(t.slid for t in self.free.turns),
            "slides_teacher_forced": sum(t.slid for t in self.forced.turns),
            "slides_on_same_input": sum(t.slid_on_same_input for t in self.free.turns),
            "out_of_candidates": sum(d.out_of_candidates for t in self.free.turns for d in t.decisions),
            "out_of_candidates_teacher_forced": sum(
                d.out_of_candidates for t in self.forced.turns for d in t.decisions
            ),
            "refused_outputs": sum(d.refused for t in main.turns for d in t.decisions),
            "turns": turns,
            "seconds": round(self.seconds, 1),
        }


def _percentile(values: list[int], q: int) -> int | None:
    if not values:
        return None
    index = min(len(values) - 1, max(0, round(q / 100 * (len(values) - 1))))
    return int(values[index])


def growth(calls: list[tuple[int, int]], late: int = GROWTH_LATE_TURN) -> float | None:
    """Mean router prompt tokens at turn >= `late` over the mean at turn 2 (turns 2-3 if turn 2 had no call)."""
    late_tokens = [tok for i, tok in calls if i >= late]
    early = [tok for i, tok in calls if i == 2] or [tok for i, tok in calls if i in (2, 3)]
    if not late_tokens or not early:
        return None
    return round(statistics.mean(late_tokens) / statistics.mean(early), 3)


def never_switch(conversations: list[dict[str, Any]]) -> dict[str, float]:
    free = forced = total = 0
    for conv in conversations:
        previous = ROOT
        for turn in conv["turns"]:
            total += 1
            free += turn["expect"] == ROOT
            forced += turn["expect"] == previous
            previous = turn["expect"]
    return {
        "accuracy": round(free / max(total, 1), 4),
        "accuracy_teacher_forced": round(forced / max(total, 1), 4),
    }


# ---- running -------------------------------------------------------------------------------------------------


def make_tool_decider(model: ModelClient, model_name: str) -> Callable[[DecisionRequest], Decision]:
    """Mode `tool` outside the Runner: the node's own model answers with handoff tools offered."""
    from ..types import handoff_tool_name

    def decide(request: DecisionRequest) -> Decision:
        graph, node = request.graph, request.current
        candidates = request.candidates()
        tools = [
            {
                "type": "function",
                "function": {
                    "name": handoff_tool_name(k),
                    "description": graph.nodes[k].description or graph.nodes[k].title,
                    "parameters": {"type": "object", "properties": {}},
                },
            }
            for k in candidates
        ]
        messages = [{"role": "system", "content": f"You are {node.title}. {node.description}"}]
        for t in request.history[-4:]:
            messages.append({"role": t.role, "content": t.content})
        messages.append({"role": "user", "content": request.message})
        decision = Decision(request.node, request.phase, "tool", candidates, request.node, model=model_name)
        started = time.monotonic()
        try:
            response = model.complete(model=model_name, messages=messages, tools=tools, temperature=0)
        except Exception as exc:
            decision.reason = f"model failed: {exc}"
            return decision
        decision.llm_calls = 1
        decision.latency_ms = (time.monotonic() - started) * 1000
        decision.input_tokens = response.usage.input_tokens
        decision.output_tokens = response.usage.output_tokens
        decision.prompt = json.dumps(messages, ensure_ascii=False)
        decision.raw_output = response.content or json.dumps([c.name for c in response.tool_calls])
        for call in response.tool_calls:
            target = call.name.removeprefix("handoff_to_")
            decision.parsed = target
            if target in candidates:
                decision.target = target
                decision.reason = f"handoff tool {call.name}"
            else:
                decision.refused = True
                decision.reason = f"unknown transfer tool {call.name}: stay"
            break
        else:
            decision.reason = "no handoff tool called"
        return decision

    return decide


def build_strategy(
    name: str,
    *,
    encoder: Encoder | None,
    router_for: Callable[[RouterEndpoint], tuple[RouterModel, str] | None],
    tool_decider: Callable[[DecisionRequest], Decision] | None,
) -> tuple[Strategy, Policy]:
    if name in ("ours", "ours-pair"):
        # "ours": the product's default (one router call per message at most: the A-or-B question);
        # "ours-pair": a budget of two calls, so unclear cases get the two yes/no questions.
        settings = SemanticSettings(ab_offset=float(os.environ.get("CAPTAIN_ROUTER_AB_OFFSET", "0.6")))
        return (
            OursStrategy(
                encoder=encoder, routers=router_for, tool_decider=tool_decider, settings=settings, name=name
            ),
            Policy(model_calls=2 if name == "ours-pair" else 1),
        )
    if name == "ours-nomodel":
        return (
            OursStrategy(
                encoder=encoder, routers=router_for, tool_decider=tool_decider, use_model=False, name=name
            ),
            Policy(),
        )
    if name == "coze":
        return CozeStrategy(routers=router_for), COZE_POLICY
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
        node = ROOT
        history: list[Turn] = []
        started = time.monotonic()
        for i, turn in enumerate(conv["turns"], start=1):
            start = node
            canned = turn.get("assistant")
            used = [False]

            def respond(
                key: str,
                turns: list[Turn],
                canned: str | None = canned,
                used: list[bool] = used,
                graph: Graph = graph,
            ) -> str | None:
                if used[0]:
                    return None  # one reply per customer turn in the replay
                used[0] = True
                if canned:
                    return canned
                return reply_for(graph, key, turns) if reply_for else f"({graph.nodes[key].title})"

            out = dispatch_message(
                graph,
                strategy,
                current=start,
                message=turn["user"],
                history=history,
                respond=respond,
                policy=policy,
            )
            result.turns.append(
                TurnRecord(
                    conv.get("id", str(n)), i, start, turn["expect"], out.node, out.route, out.decisions
                )
            )
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
    router_for: Callable[[RouterEndpoint], tuple[RouterModel, str] | None],
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


def decision_lines(results: list[StrategyResult]) -> Iterable[dict[str, Any]]:
    """Every replayed turn with its decisions, for reading a benchmark run turn by turn."""
    for r in results:
        for pass_name, passed in (("free", r.free), ("forced", r.forced)):
            for t in passed.turns:
                yield {
                    "strategy": r.name,
                    "pass": pass_name,
                    "conversation": t.conversation,
                    "turn": t.index,
                    "start": t.start,
                    "expect": t.expect,
                    "got": t.got,
                    "correct": t.correct,
                    "slid": t.slid,
                    "route": t.route,
                    "decisions": [d.as_dict() for d in t.decisions],
                }


def format_table(results: list[StrategyResult], baseline: dict[str, float]) -> str:
    header = (
        f"{'strategy':<14}{'acc free':>9}{'acc TF':>8}{'calls/turn':>11}{'max':>4}{'tok p50':>8}{'tok p95':>8}"
        f"{'growth':>8}{'/tmpl':>6}{'slides':>7}{'same-in':>8}{'out-cand':>9}{'refused':>8}{'turns':>6}{'secs':>7}"
    )
    lines = [header, "-" * len(header)]

    def fmt(v: Any, spec: str) -> str:
        width = int(re.match(r"\d*", spec).group() or 0)
        return f"{'-':>{width}}" if v is None else format(v, spec)

    for r in results:
        f = r.figures()
        free = None if f["accuracy"] is None else f["accuracy"] * 100
        forced = None if f["accuracy_teacher_forced"] is None else f["accuracy_teacher_forced"] * 100
        lines.append(
            f"{r.name:<14}{fmt(free, '8.1f')}%{fmt(forced, '7.1f')}%"
            f"{fmt(f['llm_calls_per_turn'], '11.2f')}{f['llm_calls_max_per_turn']:>4d}"
            f"{fmt(f['router_prompt_tokens_p50'], '8d')}"
            f"{fmt(f['router_prompt_tokens_p95'], '8d')}{fmt(f['router_prompt_growth'], '8.2f')}"
            f"{fmt(f['router_prompt_growth_per_template'], '6.2f')}"
            f"{f['slides']:>7d}{f['slides_on_same_input']:>8d}{f['out_of_candidates']:>9d}{f['refused_outputs']:>8d}{f['turns']:>6d}{f['seconds']:>7.0f}"
        )
    lines.append(
        f"{'never-switch':<14}{baseline['accuracy'] * 100:8.1f}%{baseline['accuracy_teacher_forced'] * 100:7.1f}%"
        f"{0:11.2f}{0:>4d}{'-':>8}{'-':>8}{'-':>8}{'-':>6}{0:>7d}{0:>8d}{0:>9d}{0:>8d}"
    )
    return "\n".join(lines)
