"""Build the real-language routing sets (routing_real/*.jsonl) from public intent and dialogue data sets.

Customer messages are never written here: every `user` text (and every `assistant` text) is copied from a
source. The help desks (assistant + scenarios, no example phrases) are hand-written in desks.py from the
sources' intent, service and domain names only. Deterministic: fixed seed, sorted inputs, standard library.

Fetch the sources (raw files stay out of git, e.g. under /tmp/rr):
- CLINC150 (CC BY 3.0): https://github.com/clinc/oos-eval, `data/data_full.json` and `data/domains.json`.
- Schema-Guided Dialogue (CC BY-SA 4.0): https://github.com/google-research-datasets/dstc8-schema-guided-dialogue,
  the `dev/dialogues_*.json` and `test/dialogues_*.json` files.
- CrossWOZ (Apache-2.0): https://github.com/thu-coai/CrossWOZ, `data/crosswoz/val.json.zip` and
  `test.json.zip`, unzipped.

Run (from the repository root):
    python bench/data/routing_real/build.py clinc /tmp/rr/clinc/data_full.json /tmp/rr/clinc/domains.json
    python bench/data/routing_real/build.py sgd /tmp/rr/sgd/dev /tmp/rr/sgd/test
    python bench/data/routing_real/build.py crosswoz /tmp/rr/crosswoz/val.json /tmp/rr/crosswoz/test.json

Labels (`expect` = the node in charge AFTER the message; every conversation starts with triage in charge):
- A message's topic is a source label (CLINC intent, SGD service, CrossWOZ domain). A topic some scenario of
  the desk `covers` -> that scenario; a topic no scenario covers -> `triage`; no topic -> the previous
  expect (the node in charge keeps it). No source has requests for a person, so there is no `human`.
- CLINC150 (single queries): conversations of 2-6 queries chained within one desk. After a topic query,
  the next is, with probability 1/2, a query of a sibling intent of the same scenario (a stay), else a query
  of another scenario (70%) or an uncovered query (30%: an uncovered intent of the desk's CLINC domain, an
  out-of-scope query, or a question about the assistant such as are_you_a_bot) -> triage. Small-talk intents
  (greeting first, thank_you / yes / no / maybe between, goodbye last) have no topic -> previous expect.
  dev: the `val` + `oos_val` splits; held-out: `test` + `oos_test`, on other desks (other CLINC domains).
- SGD: the topic of a user turn is the service of each frame whose state changed: a new active intent, new
  slot values the user's text spans, or requested slots (a question about that service). If no frame has
  one of those, a frame with any new slot value (e.g. "for two people") counts. No change -> previous
  expect. dev: the dev split (dev services); held-out: the test split, whose desks use test services.
- CrossWOZ: the topic of a user turn is the domain of its non-General dialogue acts; General acts only
  (greet, thank, bye) -> previous expect. A "what is near X" question, annotated Request(<domain of X>,
  周边餐馆|周边酒店|周边景点, ""), has the domain in its slot (餐馆 / 酒店 / 景点) as topic: the customer asks
  for restaurants / hotels / sights. The named place a search goes around is not a topic: the Inform 名称 of
  the domain a Select act names (Select 餐馆 源领域=酒店 + Inform 酒店 名称) or a 周边 Request is about, and a
  name the text puts right before 附近/周边/周围 when the message asks about another domain. Dialogues are
  picked by the domains of their acts as annotated (Select anchors aside), not by the labels, so a fix of a
  labelling rule keeps the same dialogues. dev: the val split (train is not in the stored snapshot);
  held-out: the test split, with a desk that covers other domains.
- Two topics that map to different nodes: `expect` is the first one in the text (by the source's slot spans,
  or the position of an act value, a domain word or, for a CrossWOZ Request, its slot name; else the
  annotation order), and `multi` lists the nodes in text order.
- SGD and CrossWOZ dialogues are cut to their first 10 user turns; the system reply that follows a user turn
  is its `assistant` text (CLINC has none).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from desks import CLINC_DEV, CLINC_HELDOUT, CROSSWOZ_DEV, CROSSWOZ_HELDOUT, SGD_DEV, SGD_HELDOUT, Desk

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


# --- CLINC150 ---------------------------------------------------------------------------------------------

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


# --- SGD ----------------------------------------------------------------------------------------------------


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


# --- CrossWOZ -----------------------------------------------------------------------------------------------

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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="source", required=True)
    clinc = sub.add_parser("clinc")
    clinc.add_argument("data_full")
    clinc.add_argument("domains")
    sgd = sub.add_parser("sgd")
    sgd.add_argument("dev_dir")
    sgd.add_argument("test_dir")
    crosswoz = sub.add_parser("crosswoz")
    crosswoz.add_argument("val_json")
    crosswoz.add_argument("test_json")
    args = parser.parse_args(argv)
    builders: dict[str, Callable[[], None]] = {
        "clinc": lambda: build_clinc(args.data_full, args.domains),
        "sgd": lambda: build_sgd(args.dev_dir, args.test_dir),
        "crosswoz": lambda: build_crosswoz(args.val_json, args.test_json),
    }
    builders[args.source]()


if __name__ == "__main__":
    main()
