"""Schema-Guided Dialogue -> sgd_dev.jsonl, sgd_heldout.jsonl: a user turn's topics are the services whose
dialogue state it changed (rules in build.py's docstring)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from common import MAX_TURNS, SEED, Turn, conversation, label_turns, node_for, pick_dialogues, write
from desks import SGD_DEV, SGD_HELDOUT, Desk


def sgd_topics(turn: dict[str, Any], seen: dict[str, dict[str, Any]]) -> list[str]:
    """Services whose state this user turn changed, in text order; updates `seen` (service -> last state)."""
    strong: list[tuple[int, str]] = []
    weak: list[tuple[int, str]] = []
    for order, frame in enumerate(turn["frames"]):
        service, state = frame["service"], frame["state"]
        old = seen.get(service, {"active_intent": "NONE", "slot_values": {}})
        new_values = {k for k, v in state["slot_values"].items() if v != old["slot_values"].get(k)}
        spanned = {slot["slot"] for slot in frame["slots"]}
        starts = [slot["start"] for slot in frame["slots"]]
        position = min(starts) if starts else 10_000 + order
        intent_changed = state["active_intent"] not in ("NONE", old["active_intent"])
        if intent_changed or state["requested_slots"] or new_values & spanned:
            strong.append((position, service))
        elif new_values:
            weak.append((position, service))
        seen[service] = state
    return [service for _, service in sorted(strong or weak)]


def sgd_conversation(desk: Desk, dialogue: dict[str, Any]) -> list[Turn]:
    rows: list[tuple[str, list[str], str | None]] = []
    seen: dict[str, dict[str, Any]] = {}
    turns = dialogue["turns"]
    for i, turn in enumerate(turns):
        if turn["speaker"] != "USER":
            continue
        if len(rows) == MAX_TURNS:
            break
        reply = turns[i + 1]["utterance"] if i + 1 < len(turns) else None
        nodes = [node_for(desk, service) for service in sgd_topics(turn, seen)]
        rows.append((turn["utterance"], nodes, reply))
    return label_turns(rows)


def build_sgd(dev_dir: str, test_dir: str) -> None:
    rng = random.Random(SEED)
    for name, desks, folder, per_desk in (
        ("sgd_dev", SGD_DEV, dev_dir, 8),
        ("sgd_heldout", SGD_HELDOUT, test_dir, 10),
    ):
        dialogues = [
            d
            for path in sorted(Path(folder).glob("dialogues_*.json"))
            for d in json.loads(path.read_text(encoding="utf-8"))
        ]
        convs = []
        for desk, dialogue in pick_dialogues(desks, dialogues, lambda d: set(d["services"]), per_desk, rng):
            turns = sgd_conversation(desk, dialogue)
            did = dialogue["dialogue_id"]
            convs.append(conversation(desk, f"sgd-{desk['id']}-{did}", turns, "sgd", did))
        write(name, convs)
