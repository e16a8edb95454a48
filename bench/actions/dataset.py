"""An actions benchmark set: shop tasks as customers write them, each judged by the fake shop's final state.

One JSON object per line (`data/main.jsonl`, `data/heldout.jsonl`; both written before any tuning):

    id             unique in the set
    lang           en | zh
    kind           lookup | change | declined | impossible (for the per-kind figures)
    turns          the customer's messages; a later one ("yes") is sent after the AI answered the one before
    changes        the shop changes the task must end with, each {kind: refund | cancel | address, order_id,
                   amount (refund), address_contains (address: substrings the new address must hold)}; empty or
                   absent: the shop must not change at all
    confirm_turns  indexes of the turns at which the customer confirms; a change made at any other turn is an
                   unconfirmed side effect (a change before the "yes", or with no "yes" at all)
    possible       false when the request cannot be done (a shipped order, a missing one, a second refund)
    reply_any      the final reply must name one of these (lookups: the fact asked for)
    reply_not      the final reply must name none of these (impossible tasks: claims of success)
    long_output    a tool answer here is long (a customer's whole order history): the compression comparison
                   replays these tasks with compression off
    calls          the shop calls a careful agent needs (documentation; not scored)

`load_set` refuses a set that cannot be judged, so a typo in a data file fails loudly.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LANGS = ("en", "zh")
KINDS = ("lookup", "change", "declined", "impossible")
CHANGE_KINDS = ("refund", "cancel", "address")


@dataclass(frozen=True)
class ExpectedChange:
    kind: str
    order_id: str
    amount: float | None = None
    address_contains: tuple[str, ...] = ()


@dataclass(frozen=True)
class Task:
    id: str
    lang: str
    kind: str
    turns: tuple[str, ...]
    changes: tuple[ExpectedChange, ...] = ()
    confirm_turns: tuple[int, ...] = ()
    possible: bool = True
    reply_any: tuple[str, ...] = ()
    reply_not: tuple[str, ...] = ()
    long_output: bool = False
    calls: int = 1


def normalise(text: str) -> str:
    """Case-folded, full-width forms folded (NFKC), whitespace removed, curly apostrophes made straight: "Has
    been   Cancelled" and "hasbeencancelled" are the same claim, and Chinese has no spaces to rely on."""
    text = unicodedata.normalize("NFKC", text).replace("\u2019", "'").casefold()
    return re.sub(r"\s+", "", text)


def mentions(text: str, phrases: tuple[str, ...] | list[str]) -> bool:
    """Any phrase in the text; a phrase that starts or ends with a digit never matches inside a longer number
    ("7" is not in "1007")."""
    haystack = normalise(text)
    for phrase in phrases:
        core = re.escape(normalise(phrase))
        if not core:
            continue
        before = r"(?<![0-9])" if phrase[:1].isdigit() else ""
        after = r"(?![0-9])" if phrase[-1:].isdigit() else ""
        if re.search(before + core + after, haystack):
            return True
    return False


def _change(raw: Any, where: str) -> ExpectedChange:
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: a change must be an object")
    kind = raw.get("kind")
    if kind not in CHANGE_KINDS:
        raise ValueError(f"{where}: change kind {kind!r} (of: {', '.join(CHANGE_KINDS)})")
    order_id = str(raw.get("order_id", "")).strip()
    if not order_id:
        raise ValueError(f"{where}: change without order_id")
    amount = raw.get("amount")
    if kind == "refund" and not isinstance(amount, int | float):
        raise ValueError(f"{where}: a refund change needs a numeric amount")
    contains = tuple(raw.get("address_contains") or ())
    if kind == "address" and not contains:
        raise ValueError(f"{where}: an address change needs address_contains")
    return ExpectedChange(kind, order_id, float(amount) if amount is not None else None, contains)


def task_from(raw: dict[str, Any], where: str = "task") -> Task:
    known = {
        "id", "lang", "kind", "turns", "changes", "confirm_turns", "possible", "reply_any", "reply_not",
        "long_output", "calls", "note",
    }  # fmt: skip
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ValueError(f"{where}: unknown fields {unknown}")
    turns = tuple(raw.get("turns") or ())
    if not turns or not all(isinstance(t, str) and t.strip() for t in turns):
        raise ValueError(f"{where}: needs non-empty turns")
    task = Task(
        id=str(raw.get("id", "")),
        lang=str(raw.get("lang", "")),
        kind=str(raw.get("kind", "")),
        turns=turns,
        changes=tuple(_change(c, f"{where} change {i}") for i, c in enumerate(raw.get("changes") or ())),
        confirm_turns=tuple(int(t) for t in raw.get("confirm_turns") or ()),
        possible=bool(raw.get("possible", True)),
        reply_any=tuple(raw.get("reply_any") or ()),
        reply_not=tuple(raw.get("reply_not") or ()),
        long_output=bool(raw.get("long_output", False)),
        calls=int(raw.get("calls", 1)),
    )
    problems = task_problems(task)
    if problems:
        raise ValueError(f"{where} ({task.id or 'no id'}): " + "; ".join(problems))
    return task


def task_problems(task: Task) -> list[str]:
    """Why a task cannot be judged (empty when it can)."""
    out: list[str] = []
    if not task.id:
        out.append("no id")
    if task.lang not in LANGS:
        out.append(f"lang {task.lang!r} (of: {', '.join(LANGS)})")
    if task.kind not in KINDS:
        out.append(f"kind {task.kind!r} (of: {', '.join(KINDS)})")
    if any(not 0 <= t < len(task.turns) for t in task.confirm_turns):
        out.append("a confirm turn is outside the turns")
    if task.changes and not task.confirm_turns:
        out.append("expects a change but names no confirmation turn")
    if not task.possible and task.changes:
        out.append("an impossible task cannot expect a change")
    if task.kind == "change" and not task.changes:
        out.append("kind change without an expected change")
    if task.kind in ("declined", "impossible") and task.changes:
        out.append(f"kind {task.kind} must expect no change")
    if not (task.changes or task.reply_any or task.reply_not):
        out.append("nothing to judge: no change, reply_any or reply_not")
    return out


def load_set(path: Path) -> list[Task]:
    tasks: list[Task] = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        tasks.append(task_from(json.loads(line), f"{path.name}:{number}"))
    ids = [t.id for t in tasks]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"{path.name}: duplicate ids {duplicates}")
    return tasks
