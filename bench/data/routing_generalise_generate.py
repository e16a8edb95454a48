"""Write routing_generalise.jsonl from the hand-written routing_generalise_domains.py.

    python bench/data/routing_generalise_generate.py

Deterministic: no randomness, conversations in source order, keys in a fixed order, so the output is
reproducible byte for byte (the dataset test checks it). The set is for evaluation only, never for tuning.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from routing_generalise_domains import CONVERSATIONS, DOMAINS

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "routing_generalise.jsonl"


def conversation(source: dict[str, Any]) -> dict[str, Any]:
    domain = DOMAINS[source["domain"]]
    conv: dict[str, Any] = {
        "id": source["id"],
        "shape": source["shape"],
        "assistant": dict(domain["assistant"]),
        # Builders' descriptions only: no example phrases anywhere in this set.
        "scenarios": [
            {
                "key": s["key"],
                "title": s["title"],
                "description": s["description"],
                "instruction": s["instruction"],
                "examples": [],
            }
            for s in domain["scenarios"]
        ],
    }
    for field in ("edges", "global", "nodes"):
        if source.get(field):
            conv[field] = source[field]
    turns = []
    for user, expect, *reply in source["turns"]:
        turn = {"user": user, "expect": expect}
        if reply and reply[0] is not None:
            turn["assistant"] = reply[0]
        turns.append(turn)
    conv["turns"] = turns
    return conv


def build() -> list[dict[str, Any]]:
    return [conversation(source) for source in CONVERSATIONS]


def render(conversations: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(conv, ensure_ascii=False) + "\n" for conv in conversations)


def main() -> None:
    conversations = build()
    OUTPUT.write_text(render(conversations), encoding="utf-8")
    turns = sum(len(c["turns"]) for c in conversations)
    print(f"{OUTPUT.name}: {len(conversations)} conversations, {turns} turns")


if __name__ == "__main__":
    main()
