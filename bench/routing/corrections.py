"""Learning from corrections, replayed: the routing errors of the first half of each assistant's conversations
become accepted correction examples (the message, for the node it should have gone to, as an agent's re-route
would record it), and the second half is measured with the first N of them applied.

- Only assistants with at least two conversations take part (first half: the first ceil(n/2) in file order).
- Errors are collected teacher-forced: in the product a person re-routes right after the mistake, so the next
  message starts at the right node again.
- A correction is a message that should have moved the conversation (its right node is not the one in charge
  when it arrived) and did not get there. A follow-up the router wrongly moved away is not one: it says nothing
  about its node ("the amount is 89 euros"), and as an example it would pull other follow-ups.
- Turns whose right node was people are not corrections either: people are reached by the people check, never
  by example phrases."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from captain.runtime.routing import HUMAN, Policy, Strategy

from .dataset import ROOT, graph_from_dataset
from .figures import PassResult
from .variants import add_examples, assistant_name

COUNTS: tuple[int | None, ...] = (0, 5, 10, 20, 40, None)
"""Corrections applied (None: all of them)."""


@dataclass(frozen=True)
class ReplayPoint:
    corrections: int
    accuracy: float
    """Free-running."""
    accuracy_teacher_forced: float
    turns: int


def split_halves(
    conversations: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    by_assistant: dict[str, list[dict[str, Any]]] = {}
    for conv in conversations:
        by_assistant.setdefault(assistant_name(conv), []).append(conv)
    first: list[dict[str, Any]] = []
    second: list[dict[str, Any]] = []
    for convs in by_assistant.values():
        if len(convs) < 2:
            continue
        cut = (len(convs) + 1) // 2
        first += convs[:cut]
        second += convs[cut:]
    return first, second


def corrections_from(
    conversations: list[dict[str, Any]], result: PassResult
) -> list[tuple[tuple[str, str], str]]:
    """((assistant, node that should have had it), message) for every wrong turn, in order, each message once
    per node."""
    by_id = {c.get("id", str(n)): c for n, c in enumerate(conversations, start=1)}
    seen: set[tuple[tuple[str, str], str]] = set()
    found = []
    for turn in result.turns:
        if turn.correct or turn.expect == HUMAN or turn.expect == turn.start:
            continue
        conv = by_id[turn.conversation]
        if turn.expect != ROOT and turn.expect not in graph_from_dataset(conv).nodes:
            continue
        item = ((assistant_name(conv), turn.expect), conv["turns"][turn.index - 1]["user"])
        if item not in seen:
            seen.add(item)
            found.append(item)
    return found


def replay(
    conversations: list[dict[str, Any]],
    strategy: Strategy,
    policy: Policy,
    run: Callable[[list[dict[str, Any]], Strategy, Policy, bool], PassResult],
    counts: Sequence[int | None] = COUNTS,
) -> list[ReplayPoint]:
    """Accuracy (free-running) of the second halves with the first N corrections of the first halves.
    `run(conversations, strategy, policy, forced)` replays one pass."""
    first, second = split_halves(conversations)
    if not first or not second:
        return []
    corrections = corrections_from(first, run(first, strategy, policy, True))
    points = []
    for count in counts:
        n = len(corrections) if count is None else count
        if n > len(corrections) and count is not None:
            continue
        extra: dict[tuple[str, str], list[str]] = {}
        for key, text in corrections[:n]:
            extra.setdefault(key, []).append(text)
        applied = add_examples(second, extra)
        free = run(applied, strategy, policy, False)
        forced = run(applied, strategy, policy, True)
        points.append(ReplayPoint(n, free.accuracy or 0.0, forced.accuracy or 0.0, len(free.turns)))
    return points
