"""The judge and the per-mode figures: pure functions over what a played task left behind (the shop's change
log, the final reply, per-turn counts), so the figures can be recomputed from the JSON the command writes.

The judge is strict and deterministic: a task succeeds only when the shop ends with exactly the expected changes
(no more, no fewer), each made at a turn where the customer had confirmed, and the final reply names what it
must (a looked-up fact) and claims nothing it must not (a cancellation that never happened).
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from captain.runtime.planning import PLANNING_TOOL_NAMES

from .dataset import ExpectedChange, Task, mentions, normalise

MONEY_TOLERANCE = 0.005


@dataclass
class TurnRecord:
    text: str
    outcome: str
    """The run's outcome (reply, human_handoff, error...), or `none` when no run answered."""
    reply: str
    seconds: float
    """From ingest to the run's end (the reply is written by then: eager mode)."""
    input_tokens: int = 0
    output_tokens: int = 0
    llm_calls: int = 0
    detail: str = ""
    """The run's detail: why it ended in an error or a handoff."""
    first_thought_seconds: float | None = None
    """From ingest to the first `thought` on the conversation's live channel; None when none came."""
    thoughts: int = 0
    tool_calls: dict[str, int] = field(default_factory=dict)
    """Tool calls of the run by tool name, from its spans (custom tools, plan/think/summary tools...)."""
    shop_requests: int = 0
    """Requests that reached the fake shop during this turn."""
    artifacts: int = 0
    """Long tool outputs the runs of this turn stored as artifacts (context compression)."""


@dataclass
class TaskRun:
    task: Task
    mode: str
    turns: list[TurnRecord] = field(default_factory=list)
    changes: list[dict[str, Any]] = field(default_factory=list)
    """The shop's change log after the task (`shop.Change` as dicts: turn, kind, order_id, amount, address)."""
    confirmations: list[dict[str, str]] = field(default_factory=list)
    """The conversation's ToolConfirmation rows: tool and status."""
    handoffs: int = 0
    error: str = ""
    """Set when the harness itself failed on this task (the task counts as failed)."""

    @property
    def final_reply(self) -> str:
        return self.turns[-1].reply if self.turns else ""


@dataclass(frozen=True)
class Verdict:
    success: bool
    state_ok: bool
    """The shop ended with exactly the expected changes, each confirmed."""
    reply_ok: bool
    wrong: int
    """Changes that are not expected (or a second one of the same)."""
    unconfirmed: int
    """Changes (expected or not) made at a turn where the customer had not confirmed."""
    missing: int
    """Expected changes that never happened."""
    dangling: int = 0
    """Confirmation questions still open when the task ended (the agent asked to change something the customer
    never agreed to, or asked again for a change already made): not a success."""


def change_matches(expected: ExpectedChange, actual: dict[str, Any]) -> bool:
    if actual.get("kind") != expected.kind or str(actual.get("order_id")) != expected.order_id:
        return False
    if expected.amount is not None:
        amount = actual.get("amount")
        if amount is None or abs(float(amount) - expected.amount) > MONEY_TOLERANCE:
            return False
    if expected.address_contains:
        address = normalise(str(actual.get("address") or ""))
        if not all(normalise(part) in address for part in expected.address_contains):
            return False
    return True


def judge(task: Task, changes: Sequence[dict[str, Any]], final_reply: str) -> Verdict:
    unmatched = list(task.changes)
    wrong = unconfirmed = 0
    for change in changes:
        if change.get("turn") not in task.confirm_turns:
            unconfirmed += 1
        hit = next((e for e in unmatched if change_matches(e, change)), None)
        if hit is None:
            wrong += 1
        else:
            unmatched.remove(hit)
    state_ok = not unmatched and not wrong and not unconfirmed
    reply_ok = (not task.reply_any or mentions(final_reply, task.reply_any)) and not mentions(
        final_reply, task.reply_not
    )
    return Verdict(
        success=state_ok and reply_ok,
        state_ok=state_ok,
        reply_ok=reply_ok,
        wrong=wrong,
        unconfirmed=unconfirmed,
        missing=len(unmatched),
    )


def verdict_of(run: TaskRun) -> Verdict:
    verdict = judge(run.task, run.changes, run.final_reply)
    dangling = sum(1 for c in run.confirmations if c.get("status") == "pending")
    if run.error:
        return Verdict(False, False, False, verdict.wrong, verdict.unconfirmed, verdict.missing, dangling)
    return dataclasses.replace(verdict, success=verdict.success and not dangling, dangling=dangling)


def is_planning_tool(name: str) -> bool:
    """Planning mode's own tools (the todo list, the reasoning tool, asking the customer, the final answer, the
    artifact search), as opposed to the shop's."""
    return name in PLANNING_TOOL_NAMES


def _pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "-"


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 1) if values else None


def mode_figures(runs: Sequence[TaskRun]) -> dict[str, Any]:
    """Figures of one mode over one set."""
    verdicts = [verdict_of(r) for r in runs]
    by_kind = {
        kind: f"{sum(1 for r, v in zip(runs, verdicts, strict=True) if v.success and r.task.kind == kind)}"
        f"/{sum(1 for r in runs if r.task.kind == kind)}"
        for kind in sorted({r.task.kind for r in runs})
    }
    turns = [t for r in runs for t in r.turns]
    first_thoughts = [t.first_thought_seconds for t in turns if t.first_thought_seconds is not None]
    per_task: dict[str, list[float]] = {
        "shop_calls": [sum(t.shop_requests for t in r.turns) for r in runs],
        "tool_calls": [sum(sum(t.tool_calls.values()) for t in r.turns) for r in runs],
        "planning_calls": [
            sum(n for t in r.turns for name, n in t.tool_calls.items() if is_planning_tool(name))
            for r in runs
        ],
        "llm_calls": [sum(t.llm_calls for t in r.turns) for r in runs],
        "prompt_tokens": [sum(t.input_tokens for t in r.turns) for r in runs],
        "seconds": [sum(t.seconds for t in r.turns) for r in runs],
        "artifacts": [sum(t.artifacts for t in r.turns) for r in runs],
    }
    return {
        "tasks": len(runs),
        "success": _pct(sum(v.success for v in verdicts), len(verdicts)),
        "success_share": sum(v.success for v in verdicts) / len(verdicts) if verdicts else 0.0,
        "success_by_kind": by_kind,
        "state_right": _pct(sum(v.state_ok for v in verdicts), len(verdicts)),
        "wrong_side_effects": sum(v.wrong for v in verdicts),
        "unconfirmed_side_effects": sum(v.unconfirmed for v in verdicts),
        "missing_changes": sum(v.missing for v in verdicts),
        "left_asking": sum(v.dangling for v in verdicts),
        "confirmations_asked": sum(len(r.confirmations) for r in runs),
        "shop_calls_per_task": _mean(per_task["shop_calls"]),
        "tool_calls_per_task": _mean(per_task["tool_calls"]),
        "planning_calls_per_task": _mean(per_task["planning_calls"]),
        "llm_calls_per_task": _mean(per_task["llm_calls"]),
        "prompt_tokens_per_task": _mean(per_task["prompt_tokens"]),
        "artifacts_per_task": _mean(per_task["artifacts"]),
        "first_thought_seconds": round(statistics.median(first_thoughts), 2) if first_thoughts else "n/a",
        "turns_with_thoughts": _pct(sum(1 for t in turns if t.thoughts), len(turns)),
        "errors": sum(1 for t in turns if t.outcome == "error") + sum(1 for r in runs if r.error),
        "handoffs": sum(r.handoffs for r in runs),
        "seconds_per_task": _mean(per_task["seconds"]),
    }


def compression_figures(with_compression: Sequence[TaskRun], without: Sequence[TaskRun]) -> dict[str, Any]:
    """Planning mode (native calls) on the long-output tasks, context compression on vs off."""
    ids = {r.task.id for r in without}
    on = [r for r in with_compression if r.task.id in ids]

    def tokens(runs: Sequence[TaskRun]) -> float | None:
        return _mean([sum(t.input_tokens for t in r.turns) for r in runs])

    on_tokens, off_tokens = tokens(on), tokens(without)
    return {
        "tasks": len(without),
        "prompt_tokens_per_task_on": on_tokens,
        "prompt_tokens_per_task_off": off_tokens,
        "saved": f"{100 * (1 - on_tokens / off_tokens):.0f}%" if on_tokens and off_tokens else "-",
        "success_on": _pct(sum(verdict_of(r).success for r in on), len(on)),
        "success_off": _pct(sum(verdict_of(r).success for r in without), len(without)),
        "artifacts_on": sum(t.artifacts for r in on for t in r.turns),
        "artifacts_off": sum(t.artifacts for r in without for t in r.turns),
    }


ROWS = [
    ("success", "task success"),
    ("success_by_kind", "  by kind"),
    ("state_right", "shop state right"),
    ("wrong_side_effects", "wrong side effects"),
    ("unconfirmed_side_effects", "unconfirmed side effects"),
    ("missing_changes", "expected changes missing"),
    ("left_asking", "confirmations left open"),
    ("confirmations_asked", "confirmations asked"),
    ("shop_calls_per_task", "shop calls / task"),
    ("tool_calls_per_task", "tool calls / task (spans)"),
    ("planning_calls_per_task", "  of which planning tools"),
    ("llm_calls_per_task", "model calls / task"),
    ("prompt_tokens_per_task", "prompt tokens / task"),
    ("artifacts_per_task", "artifacts / task"),
    ("first_thought_seconds", "first thought (s, median)"),
    ("turns_with_thoughts", "turns with thoughts"),
    ("errors", "errors"),
    ("handoffs", "handoffs"),
    ("seconds_per_task", "seconds / task"),
]


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, dict):
        return " ".join(f"{k} {v}" for k, v in value.items())
    return str(value)


def format_table(figures: dict[str, dict[str, Any]]) -> str:
    """One column per mode, one row per figure."""
    modes = list(figures)
    width = max(22, *(len(_cell(figures[m].get(key))) + 2 for m in modes for key, _ in ROWS))
    width = max(width, *(len(m) + 2 for m in modes))
    lines = [f"{'':28}" + "".join(f"{m:>{width}}" for m in modes)]
    for key, label in ROWS:
        lines.append(f"{label:28}" + "".join(f"{_cell(figures[m].get(key)):>{width}}" for m in modes))
    return "\n".join(lines)


def run_record(run: TaskRun) -> dict[str, Any]:
    v = verdict_of(run)
    return {
        "id": run.task.id,
        "lang": run.task.lang,
        "kind": run.task.kind,
        "mode": run.mode,
        "success": v.success,
        "state_ok": v.state_ok,
        "reply_ok": v.reply_ok,
        "wrong": v.wrong,
        "unconfirmed": v.unconfirmed,
        "missing": v.missing,
        "left_asking": v.dangling,
        "changes": run.changes,
        "confirmations": run.confirmations,
        "handoffs": run.handoffs,
        "error": run.error,
        "turns": [
            {
                "text": t.text,
                "outcome": t.outcome,
                "reply": t.reply,
                "seconds": round(t.seconds, 2),
                "input_tokens": t.input_tokens,
                "output_tokens": t.output_tokens,
                "llm_calls": t.llm_calls,
                "detail": t.detail,
                "first_thought_seconds": t.first_thought_seconds,
                "thoughts": t.thoughts,
                "tool_calls": t.tool_calls,
                "shop_requests": t.shop_requests,
                "artifacts": t.artifacts,
            }
            for t in run.turns
        ],
    }
