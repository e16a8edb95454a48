"""Scoring the final answers and the per-set figures (pure functions over `Played`, so the figures can be
recomputed from the JSON the command writes)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .dataset import Conversation, mentions
from .harness import MODES, Played


@dataclass(frozen=True)
class Score:
    right: bool
    """Names an expected spelling and neither a stale nor another wrong value."""
    stale: bool
    """Names a value the customer corrected (whatever else it says)."""
    wrong: bool
    """Names another plausible value (the price of another plan)."""


def score(reply: str, conversation: Conversation) -> Score:
    """Case-insensitive, whitespace-normalised: "kx19 abd" matches "KX19ABD"; a number never matches inside a
    longer one."""
    stale = mentions(reply, conversation.stale)
    wrong = mentions(reply, conversation.wrong)
    right = mentions(reply, conversation.expect) and not stale and not wrong
    return Score(right=right, stale=stale, wrong=wrong)


def _pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "-"


def mode_figures(played: Sequence[Played]) -> dict[str, Any]:
    """Figures of one mode over one set."""
    scores = [score(p.final_reply, p.conversation) for p in played]
    turns = [t for p in played for t in p.turns]
    runs = [t for t in turns if t.outcome != "none"]
    marked = [t for t in runs if t.well_formed is not None]
    replies = [t for t in runs if t.outcome == "reply"]
    by_lang = {
        lang: _pct(
            sum(1 for p, s in zip(played, scores, strict=True) if s.right and p.conversation.lang == lang),
            sum(1 for p in played if p.conversation.lang == lang),
        )
        for lang in sorted({p.conversation.lang for p in played})
    }
    changed = [(p, s) for p, s in zip(played, scores, strict=True) if p.conversation.changed]
    return {
        "conversations": len(played),
        "right": _pct(sum(s.right for s in scores), len(scores)),
        "right_share": sum(s.right for s in scores) / len(scores) if scores else 0.0,
        "right_by_language": by_lang,
        "right_changed_facts": _pct(sum(s.right for _, s in changed), len(changed)),
        "stale_answers": sum(s.stale for s in scores),
        "wrong_value_answers": sum(s.wrong for s in scores),
        "final_not_a_reply": sum(1 for p in played if not p.turns or p.turns[-1].outcome != "reply"),
        "handoffs": sum(p.handoffs for p in played),
        "runs": len(runs),
        # Over every run of the mode that carries the marker: a reply that came back broken ends the run in an
        # error, so it is counted here even though no reply was sent.
        "structured_replies": _pct(sum(1 for t in marked if t.well_formed), len(marked))
        if marked
        else "missing",
        "structured_marked_runs": len(marked),
        "reasoning_kept": _pct(sum(1 for t in replies if t.reasoning), len(replies)),
        "mean_seconds_per_turn": round(sum(t.seconds for t in turns) / len(turns), 2) if turns else 0.0,
    }


ROWS = [
    ("right", "right final answers"),
    ("right_changed_facts", "  of which changed facts"),
    ("right_by_language", "  by language"),
    ("stale_answers", "stale-value answers"),
    ("wrong_value_answers", "other-value answers"),
    ("final_not_a_reply", "final turn not answered"),
    ("handoffs", "handoffs (turns)"),
    ("structured_replies", "structured replies"),
    ("reasoning_kept", "reasoning kept"),
    ("mean_seconds_per_turn", "mean seconds / turn"),
]


def _cell(value: Any) -> str:
    if isinstance(value, dict):
        return " ".join(f"{k} {v}" for k, v in value.items())
    return str(value)


def format_table(figures: dict[str, dict[str, Any]]) -> str:
    """One column per mode (history-only, memory), one row per figure."""
    modes = [m for m in MODES if m in figures]
    width = max(28, *(len(_cell(figures[m][key])) + 2 for m in modes for key, _ in ROWS))
    header = f"{'':26}" + "".join(f"{('history-only' if m == 'history' else m):>{width}}" for m in modes)
    lines = [header]
    for key, label in ROWS:
        lines.append(f"{label:26}" + "".join(f"{_cell(figures[m][key]):>{width}}" for m in modes))
    return "\n".join(lines)


def played_record(p: Played) -> dict[str, Any]:
    s = score(p.final_reply, p.conversation)
    return {
        "id": p.conversation.id,
        "lang": p.conversation.lang,
        "mode": p.mode,
        "right": s.right,
        "stale": s.stale,
        "wrong": s.wrong,
        "final_reply": p.final_reply,
        "remembered": p.remembered,
        "handoffs": p.handoffs,
        "turns": [
            {
                "text": t.text,
                "outcome": t.outcome,
                "reply": t.reply,
                "seconds": round(t.seconds, 2),
                "well_formed": t.well_formed,
                "reasoning": t.reasoning,
            }
            for t in p.turns
        ],
    }
