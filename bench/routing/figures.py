"""The benchmark's figures: what one replayed turn reached, per-pass and per-strategy scores, the never-switch
baseline, and the printed table."""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from captain.runtime.routing import HUMAN, Decision

from .dataset import ROOT
from .variants import SHAPES, shapes_of

GROWTH_LATE_TURN = 20


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
    previous: str = ROOT
    """The node the label put in charge before this turn (the previous turn's `expect`; triage on turn 1)."""
    multi: tuple[str, ...] = ()
    """A message with two topics: their nodes in text order (`expect` is the first)."""

    @property
    def second_told(self) -> bool:
        """The node in charge was told about the message's second topic (a decision named it)."""
        return len(self.multi) > 1 and any(d.also == self.multi[1] for d in self.decisions)

    @property
    def correct(self) -> bool:
        return self.got == self.expect

    @property
    def kind(self) -> str:
        """What the label asks of this turn: `stay` (the node in charge keeps the message), `switch` (to a
        specialist, or to people), or `back` (a specialist's message that belongs to triage)."""
        if self.expect == self.previous:
            return "stay"
        return "back" if self.expect == ROOT else "switch"

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
            # People are the costly destination: control never comes back. Counted on the free-running pass.
            "wrong_to_people": sum(t.got == HUMAN and t.expect != HUMAN for t in self.free.turns),
            "wrong_to_people_pct": round(
                100 * sum(t.got == HUMAN and t.expect != HUMAN for t in self.free.turns) / max(turns, 1), 2
            ),
            "people_requests_reached": sum(t.got == HUMAN and t.expect == HUMAN for t in self.free.turns),
            "people_requests": sum(t.expect == HUMAN for t in self.free.turns),
            "turns": turns,
            "seconds": round(self.seconds, 1),
            **kind_accuracy(self.free),
        }


TURN_KINDS = ("stay", "switch", "back")


def kind_accuracy(passed: PassResult) -> dict[str, Any]:
    """Free-running accuracy on the turns whose label keeps the node in charge (`stay`), moves to a specialist
    or people (`switch`), or gives the message back to triage (`back`), and on every turn triage should end in
    charge of (`triage_own`: questions no specialist covers, kept or taken back)."""
    out: dict[str, Any] = {}
    groups = {kind: [t for t in passed.turns if t.kind == kind] for kind in TURN_KINDS}
    groups["triage_own"] = [t for t in passed.turns if t.expect == ROOT]
    groups["multi"] = [t for t in passed.turns if len(t.multi) > 1]
    for kind, turns in groups.items():
        out[f"{kind}_accuracy"] = round(sum(t.correct for t in turns) / len(turns), 4) if turns else None
        out[f"{kind}_turns"] = len(turns)
    # Of the two-topic messages: the first topic reached and the second named to the node in charge.
    multi = groups["multi"]
    out["multi_both_accuracy"] = (
        round(sum(t.correct and t.second_told for t in multi) / len(multi), 4) if multi else None
    )
    # Told of a second topic on a message with one: noise in the node's prompt.
    single = [t for t in passed.turns if len(t.multi) < 2]
    out["second_topic_on_single"] = sum(any(d.also for d in t.decisions) for t in single)
    return out


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
        digits = re.match(r"\d*", spec)
        width = int(digits.group() or 0) if digits else 0
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


def shape_accuracy(passed: PassResult, conversations: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Accuracy of a pass per graph shape (a conversation counts for every shape it has)."""
    shapes = {c.get("id", str(n)): shapes_of(c) for n, c in enumerate(conversations, start=1)}
    out: dict[str, dict[str, Any]] = {}
    for shape in SHAPES:
        turns = [t for t in passed.turns if shape in shapes.get(t.conversation, set())]
        if turns:
            out[shape] = {
                "accuracy": round(sum(t.correct for t in turns) / len(turns), 4),
                "turns": len(turns),
                "conversations": len({t.conversation for t in turns}),
            }
    return out


def _turns_key(kind: str) -> str:
    return f"{kind.removesuffix('_both')}_turns"


def format_kinds(results: list[StrategyResult]) -> str:
    """Free-running accuracy per strategy on stays, switches, hand-backs, triage's own turns and two-topic
    messages (`multi`: the first topic reached; `multi_both`: and the second named to the node in charge)."""
    kinds = (*TURN_KINDS, "triage_own", "multi", "multi_both")
    header = f"{'strategy':<18}" + "".join(f"{k:>14}" for k in kinds)
    lines = [header, "-" * len(header)]
    for r in results:
        if not r.free.turns:
            continue
        f = r.figures()
        cells = "".join(
            f"{f[f'{k}_accuracy'] * 100:7.1f}% ({f[_turns_key(k)]:>3})"
            if f[f"{k}_accuracy"] is not None
            else f"{'-':>14}"
            for k in kinds
        )
        lines.append(f"{r.name:<18}{cells}")
    return "\n".join(lines)


def format_shapes(results: list[StrategyResult], conversations: list[dict[str, Any]]) -> str:
    """Free-running accuracy per strategy and graph shape, and wrong jumps to people."""
    header = f"{'strategy':<18}" + "".join(f"{s:>14}" for s in SHAPES) + f"{'to people':>11}{'people':>8}"
    lines = [header, "-" * len(header)]
    for r in results:
        if not r.free.turns:
            continue
        acc = shape_accuracy(r.free, conversations)
        f = r.figures()
        cells = "".join(
            f"{acc[s]['accuracy'] * 100:7.1f}% ({acc[s]['turns']:>3})" if s in acc else f"{'-':>14}"
            for s in SHAPES
        )
        lines.append(
            f"{r.name:<18}{cells}{f['wrong_to_people_pct']:>10.1f}%"
            f"{f['people_requests_reached']:>4d}/{f['people_requests']:<3d}"
        )
    return "\n".join(lines)
