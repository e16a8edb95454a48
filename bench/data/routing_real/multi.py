"""Two-topic messages -> multi_dev.jsonl, multi_heldout.jsonl: the user turns of real dialogues whose
annotations give two topics on different nodes (CrossWOZ acts of two domains, SGD state changes of two
services), each kept with the turns before it, plus a share of joined CLINC150 queries (rules in build.py's
docstring, counts in README.md)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clinc import ClincPool
from common import OUT, SEED, Conv, Turn, conversation, write
from crosswoz import crosswoz_conversation
from desks import CLINC_DEV, CLINC_HELDOUT, CROSSWOZ_DEV, CROSSWOZ_HELDOUT, SGD_DEV, SGD_HELDOUT, Desk
from sgd import sgd_conversation

CONNECTIVES = [" and ", ", also ", ". Also, "]
# Per file: CrossWOZ dialogues with a two-topic turn, SGD dialogues with one, joined CLINC pairs per desk.
CROSSWOZ_PICKS = 50
SGD_PICKS = {"multi_dev": 30, "multi_heldout": 40}
JOINED_PER_DESK = {"multi_dev": 10, "multi_heldout": 8}


def used_ids(*names: str) -> set[str]:
    """Dialogue ids already in the other routing_real files, left out so that every multi turn is new."""
    ids: set[str] = set()
    for name in names:
        for line in (OUT / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            ids.add(str(json.loads(line)["source"]["id"]))
    return ids


def up_to_last_multi(turns: list[Turn]) -> list[Turn]:
    """The turns up to the last two-topic one: what comes before it is its context, nothing after it."""
    last = max((n for n, turn in enumerate(turns) if "multi" in turn), default=-1)
    return turns[: last + 1]


def real_multi(
    desk: Desk,
    dialogues: list[tuple[str, Any]],
    build: Callable[[Desk, Any], list[Turn]],
    skip: set[str],
    picks: int,
    dataset: str,
    rng: random.Random,
) -> list[Conv]:
    """`picks` dialogues (seeded) whose first 10 user turns have a two-topic turn, cut after the last one."""
    found: list[tuple[str, list[Turn]]] = []
    for did, dialogue in dialogues:
        if did in skip:
            continue
        turns = up_to_last_multi(build(desk, dialogue))
        if turns:
            found.append((did, turns))
    rng.shuffle(found)
    chosen = sorted(found[:picks], key=lambda item: dialogues_order(item[0]))
    return [conversation(desk, f"multi-{dataset}-{desk['id']}-{did}", t, dataset, did) for did, t in chosen]


def dialogues_order(did: str) -> tuple[int, str]:
    digits = "".join(ch for ch in did if ch.isdigit())
    return (int(digits) if digits else 0, did)


def joined_clinc(desks: list[Desk], pool: ClincPool, per_desk: int, rng: random.Random) -> list[Conv]:
    """Two real CLINC queries of two covered scenarios of one desk, joined by a connective: one turn whose
    expect is the first query's scenario. Synthetic (the join is ours, both queries are real): `joined`."""
    convs: list[Conv] = []
    for desk in desks:
        scenarios = [s for s in desk["scenarios"] if s["covers"]]
        for k in range(per_desk):
            first, second = rng.sample(scenarios, 2)
            qid1, text1 = pool.draw(rng.choice(first["covers"]))
            qid2, text2 = pool.draw(rng.choice(second["covers"]))
            turn: Turn = {
                "user": text1 + rng.choice(CONNECTIVES) + text2,
                "expect": first["key"],
                "multi": [first["key"], second["key"]],
                "joined": True,
            }
            conv_id = f"multi-clinc-joined-{desk['id']}-{k + 1:02d}"
            convs.append(conversation(desk, conv_id, [turn], "clinc150", [qid1, qid2]))
    return convs


def build_multi(crosswoz_val: str, crosswoz_test: str, sgd_dev: str, sgd_test: str, clinc_data: str) -> None:
    rng = random.Random(SEED)
    clinc = json.loads(Path(clinc_data).read_text(encoding="utf-8"))
    for name, cw_path, cw_desks, sgd_dir, sgd_desks, clinc_split, clinc_desks, split in (
        ("multi_dev", crosswoz_val, CROSSWOZ_DEV, sgd_dev, SGD_DEV, "val", CLINC_DEV, "dev"),
        (
            "multi_heldout",
            crosswoz_test,
            CROSSWOZ_HELDOUT,
            sgd_test,
            SGD_HELDOUT,
            "test",
            CLINC_HELDOUT,
            "heldout",
        ),
    ):
        raw: dict[str, Any] = json.loads(Path(cw_path).read_text(encoding="utf-8"))
        cw_dialogues = [(key, raw[key]) for key in sorted(raw, key=int)]
        sgd_dialogues = [
            (d["dialogue_id"], d)
            for path in sorted(Path(sgd_dir).glob("dialogues_*.json"))
            for d in json.loads(path.read_text(encoding="utf-8"))
        ]
        convs: list[Conv] = []
        skip = used_ids(f"crosswoz_{split}")
        for desk in cw_desks:
            convs += real_multi(
                desk, cw_dialogues, crosswoz_conversation, skip, CROSSWOZ_PICKS, "crosswoz", rng
            )
        skip = used_ids(f"sgd_{split}")
        sgd_convs: list[Conv] = []
        for desk in sgd_desks:
            sgd_convs += real_multi(desk, sgd_dialogues, sgd_conversation, skip, SGD_PICKS[name], "sgd", rng)
        # Only some desks have services on two nodes in one turn; a dialogue goes to one desk at most.
        seen: set[str] = set()
        for conv in sgd_convs:
            if conv["source"]["id"] not in seen:
                seen.add(conv["source"]["id"])
                convs.append(conv)
        rows = [(f"{clinc_split}:{i}", text, intent) for i, (text, intent) in enumerate(clinc[clinc_split])]
        convs += joined_clinc(clinc_desks, ClincPool(rows, rng), JOINED_PER_DESK[name], rng)
        write(name, convs)
