"""CrossWOZ -> crosswoz_dev.jsonl, crosswoz_heldout.jsonl: a user message's topics are the domains of its
dialogue acts, "what is near X" questions by the domain asked for (rules in build.py's docstring)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from common import MAX_TURNS, SEED, Turn, conversation, label_turns, node_for, pick_dialogues, write
from desks import CROSSWOZ_DEV, CROSSWOZ_HELDOUT, Desk

DOMAIN_WORDS = {
    "景点": ["景点", "景区", "游玩", "玩"],
    "酒店": ["酒店", "宾馆", "住"],
    "餐馆": ["餐馆", "餐厅", "饭店", "吃", "菜"],
    "地铁": ["地铁"],
    "出租": ["出租", "打车", "车"],
}
NEAR = "周边"  # CrossWOZ's "near X" request slots: 周边餐馆, 周边酒店, 周边景点


def near_text(text: str, name: str) -> bool:
    return any(f"{name}{gap}{word}" in text for gap in ("", "的") for word in ("附近", "周边", "周围"))


def crosswoz_topics(message: dict[str, Any]) -> list[str]:
    """Domains of the non-General acts of a user message, in text order (an act's value, else a domain word,
    else the annotation order)."""
    text = message["content"]
    acts = [
        # "restaurants near <hotel>?" is annotated Request(酒店, 周边餐馆, ""): the customer asks for
        # restaurants, so the act's domain is the one in its slot.
        (
            intent,
            slot.removeprefix(NEAR) if intent == "Request" and slot.startswith(NEAR) else domain,
            slot,
            value,
        )
        for intent, domain, slot, value in message["dialog_act"]
        if intent != "General"
    ]
    # The named place a search goes around is where to search, not a topic: "restaurants near <hotel>" as
    # Select(餐馆, 源领域=酒店) + Inform(酒店, 名称, <hotel>), or as Request(酒店, 周边餐馆) + the same Inform.
    anchors = {value for intent, _, slot, value in acts if intent == "Select" and slot == "源领域"}
    anchors |= {domain for intent, domain, slot, _ in message["dialog_act"] if slot.startswith(NEAR)}
    domains = {domain for _, domain, _, _ in acts}
    topics: set[str] = set()
    first: dict[str, int] = {}
    for order, (intent, domain, slot, value) in enumerate(acts):
        name = intent == "Inform" and slot == "名称"
        # Also a name the text puts right before 附近/周边/周围 when other domains are asked for ("hotels near
        # <sight>" annotated Inform(景点, 名称, <sight>) + hotel acts only).
        if not (name and (domain in anchors or (value and domains - {domain} and near_text(text, value)))):
            topics.add(domain)
        # An anchor's name still places its domain in the text when that domain is asked about too ("<sight>'s
        # address? hotels around it?").
        found = [text.find(value)] if value and slot != "源领域" else []
        found += [text.find(word) for word in DOMAIN_WORDS.get(domain, [])]
        # A question names what it asks for ("地址在哪, 周边有什么景点" asks the address first).
        found += [text.find(slot)] if intent == "Request" and not slot.startswith(NEAR) else []
        position = min([p for p in found if p >= 0], default=10_000 + order)
        first[domain] = min(position, first.get(domain, position))
    return sorted(topics, key=lambda domain: first[domain])


def crosswoz_conversation(desk: Desk, dialogue: dict[str, Any]) -> list[Turn]:
    rows: list[tuple[str, list[str], str | None]] = []
    messages = dialogue["messages"]
    for i, message in enumerate(messages):
        if message["role"] != "usr":
            continue
        if len(rows) == MAX_TURNS:
            break
        reply = messages[i + 1]["content"] if i + 1 < len(messages) else None
        nodes = [node_for(desk, domain) for domain in crosswoz_topics(message)]
        rows.append((message["content"], nodes, reply))
    return label_turns(rows)


def crosswoz_domains(dialogue: dict[str, Any]) -> set[str]:
    """Which dialogues to pick: the domains of the user's acts as annotated (like SGD's `services`), the place a
    Select act searches around aside. Not the labels, so that a fix of a labelling rule leaves the same
    dialogues picked and changes only their labels."""
    domains: set[str] = set()
    for message in dialogue["messages"]:
        if message["role"] != "usr":
            continue
        acts = message["dialog_act"]
        anchors = {value for intent, _, slot, value in acts if intent == "Select" and slot == "源领域"}
        domains |= {
            domain
            for intent, domain, slot, _ in acts
            if intent != "General" and not (intent == "Inform" and slot == "名称" and domain in anchors)
        }
    return domains


def build_crosswoz(val_path: str, test_path: str) -> None:
    rng = random.Random(SEED)
    for name, desks, path, per_desk in (
        ("crosswoz_dev", CROSSWOZ_DEV, val_path, 15),
        ("crosswoz_heldout", CROSSWOZ_HELDOUT, test_path, 30),
    ):
        raw: dict[str, dict[str, Any]] = json.loads(Path(path).read_text(encoding="utf-8"))
        dialogues = [raw[key] | {"id": key} for key in sorted(raw, key=int)]
        convs = []
        for desk, dialogue in pick_dialogues(desks, dialogues, crosswoz_domains, per_desk, rng):
            turns = crosswoz_conversation(desk, dialogue)
            did = dialogue["id"]
            convs.append(conversation(desk, f"crosswoz-{desk['id']}-{did}", turns, "crosswoz", did))
        write(name, convs)
