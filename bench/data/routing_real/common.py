"""Shared parts of the real-language routing sets (see build.py for the sources and the labelling rules):
the conversation and turn records, labelling of turns without a topic of their own, the seeded pick of
dialogues (SGD, CrossWOZ), the counts and the writing of a .jsonl file."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from desks import Desk

SEED = 20261128
OUT = Path(__file__).resolve().parent
MAX_TURNS = 10
TRIAGE = "triage"

Conv = dict[str, Any]
Turn = dict[str, Any]


def node_for(desk: Desk, label: str) -> str:
    for scenario in desk["scenarios"]:
        if label in scenario["covers"]:
            return scenario["key"]
    return TRIAGE


def conversation(desk: Desk, conv_id: str, turns: list[Turn], dataset: str, source_id: Any) -> Conv:
    scenarios: list[dict[str, Any]] = [
        {
            "key": s["key"],
            "title": s["title"],
            "description": s["description"],
            "instruction": s["instruction"],
            "examples": [],
        }
        for s in desk["scenarios"]
    ]
    return {
        "id": conv_id,
        "shape": "star",
        "assistant": {"name": desk["name"], "description": desk["description"]},
        "scenarios": scenarios,
        "turns": turns,
        "source": {"dataset": dataset, "id": source_id},
    }


def label_turns(topics: Iterable[tuple[str, list[str], str | None]]) -> list[Turn]:
    """(user text, nodes of its topics in text order, assistant reply) -> turns with expect/multi."""
    turns: list[Turn] = []
    previous = TRIAGE
    for text, nodes, reply in topics:
        distinct = list(dict.fromkeys(nodes))
        expect = distinct[0] if distinct else previous
        turn: Turn = {"user": text, "expect": expect}
        if len(distinct) > 1:
            turn["multi"] = distinct
        if reply is not None:
            turn["assistant"] = reply
        turns.append(turn)
        previous = expect
    return turns


def stats(convs: list[Conv]) -> dict[str, int]:
    out = {"conversations": len(convs), "turns": 0, "stays": 0, "switches": 0, "triage_turns": 0, "multi": 0}
    for conv in convs:
        previous = TRIAGE
        for turn in conv["turns"]:
            out["turns"] += 1
            out["stays" if turn["expect"] == previous else "switches"] += 1
            out["triage_turns"] += turn["expect"] == TRIAGE
            out["multi"] += "multi" in turn
            previous = turn["expect"]
    return out


def write(name: str, convs: list[Conv]) -> None:
    path = OUT / f"{name}.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for conv in convs:
            fh.write(json.dumps(conv, ensure_ascii=False) + "\n")
    print(name, stats(convs))


def pick_dialogues(
    desks: list[Desk],
    dialogues: list[dict[str, Any]],
    topics: Callable[[dict[str, Any]], set[str]],
    per_desk: int,
    rng: random.Random,
) -> list[tuple[Desk, dict[str, Any]]]:
    """Per desk, `per_desk` dialogues with a topic it covers: 70% with topics on two or more nodes (switches),
    the rest on one node; none used twice."""
    used: set[int] = set()
    picked: list[tuple[Desk, dict[str, Any]]] = []
    for desk in desks:
        covered = {label for s in desk["scenarios"] for label in s["covers"]}
        mixed: list[int] = []
        single: list[int] = []
        for n, dialogue in enumerate(dialogues):
            labels = topics(dialogue)
            if n in used or not labels & covered:
                continue
            nodes = {node_for(desk, label) for label in labels}
            (mixed if len(nodes) > 1 else single).append(n)
        rng.shuffle(mixed)
        rng.shuffle(single)
        n_mixed = min(len(mixed), round(per_desk * 0.7))
        chosen = mixed[:n_mixed] + single[: per_desk - n_mixed]
        used.update(chosen)
        picked += [(desk, dialogues[n]) for n in sorted(chosen)]
    return picked
