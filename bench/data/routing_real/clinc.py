"""CLINC150 -> clinc_dev.jsonl, clinc_heldout.jsonl: single queries chained into conversations within one desk
(rules in build.py's docstring)."""

from __future__ import annotations

import json
import random
from pathlib import Path

from common import SEED, TRIAGE, Turn, conversation, label_turns, write
from desks import CLINC_DEV, CLINC_HELDOUT, Desk

CLINC_DOMAIN = {
    "bank": "banking",
    "dining": "kitchen_and_dining",
    "people": "work",
    "cards": "credit_cards",
    "travel": "travel",
    "car": "auto_and_commute",
    "home": "home",
}
FOLLOW_UPS = ["thank_you", "yes", "no", "maybe"]
ABOUT_ASSISTANT = ["what_can_i_ask_you", "are_you_a_bot", "who_do_you_work_for", "what_is_your_name"]


class ClincPool:
    """Queries of one split by intent, each drawn at most once, in a seeded order."""

    def __init__(self, rows: list[tuple[str, str, str]], rng: random.Random) -> None:
        self.by_intent: dict[str, list[tuple[str, str]]] = {}
        for qid, text, intent in rows:
            self.by_intent.setdefault(intent, []).append((qid, text))
        for queries in self.by_intent.values():
            rng.shuffle(queries)

    def draw(self, intent: str) -> tuple[str, str]:
        return self.by_intent[intent].pop()


def clinc_conversation(
    desk: Desk, uncovered: list[str], pool: ClincPool, rng: random.Random, n: int
) -> tuple[list[Turn], list[str]]:
    scenarios = {s["key"]: s["covers"] for s in desk["scenarios"] if s["covers"]}
    rows: list[tuple[str, list[str], str | None]] = []
    ids: list[str] = []
    intents: list[str] = []

    def add(intent: str, nodes: list[str]) -> None:
        qid, text = pool.draw(intent)
        rows.append((text, nodes, None))
        ids.append(qid)
        intents.append(intent)

    def topic(key: str, avoid: str | None = None) -> None:
        if key == TRIAGE:
            add(rng.choice(uncovered), [TRIAGE])
            return
        intents = [i for i in scenarios[key] if i != avoid] or scenarios[key]
        add(rng.choice(intents), [key])

    if rng.random() < 0.2:
        add("greeting", [])
    current = rng.choice(list(scenarios)) if rng.random() < 0.8 else TRIAGE
    topic(current)
    goodbye = rng.random() < 0.25
    while len(rows) < n - (1 if goodbye else 0):
        if rows[-1][1] and rng.random() < 0.2:
            add(rng.choice(FOLLOW_UPS), [])
            continue
        if rng.random() < 0.5:
            topic(current, avoid=intents[-1])
        else:
            others = [k for k in scenarios if k != current]
            current = TRIAGE if current != TRIAGE and rng.random() < 0.3 else rng.choice(others)
            topic(current)
    if goodbye:
        add("goodbye", [])
    return label_turns(rows), ids


def build_clinc(data_path: str, domains_path: str) -> None:
    data = json.loads(Path(data_path).read_text(encoding="utf-8"))
    domains: dict[str, list[str]] = json.loads(Path(domains_path).read_text(encoding="utf-8"))
    rng = random.Random(SEED)
    for name, desks, splits, per_desk in (
        ("clinc_dev", CLINC_DEV, ("val", "oos_val"), 7),
        ("clinc_heldout", CLINC_HELDOUT, ("test", "oos_test"), 10),
    ):
        rows = [
            (f"{split}:{i}", text, intent) for split in splits for i, (text, intent) in enumerate(data[split])
        ]
        pool = ClincPool(rows, rng)
        convs = []
        for desk in desks:
            covered = {i for s in desk["scenarios"] for i in s["covers"]}
            uncovered = [i for i in domains[CLINC_DOMAIN[desk["id"]]] if i not in covered]
            uncovered += ["oos", "oos", *ABOUT_ASSISTANT]  # out-of-scope queries twice as likely
            for k in range(per_desk):
                n = rng.choice([2, 3, 4, 4, 5, 5, 6, 6])
                turns, ids = clinc_conversation(desk, uncovered, pool, rng, n)
                convs.append(conversation(desk, f"clinc-{desk['id']}-{k + 1:02d}", turns, "clinc150", ids))
        write(name, convs)
