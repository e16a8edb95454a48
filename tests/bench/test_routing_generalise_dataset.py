"""The generalisation routing set (bench/data/routing_generalise.jsonl): well-formed, consistent with its own
graphs, big and varied enough, and exactly what its hand-written source generates."""

from __future__ import annotations

import importlib.util
import re
from collections import Counter
from pathlib import Path

import pytest

from bench.routing.dataset import ROOT, graph_from_dataset, load_dataset

DATA = Path(__file__).resolve().parents[2] / "bench" / "data"
DATASET = DATA / "routing_generalise.jsonl"
HUMAN = "human"
CJK = re.compile(r"[\u4e00-\u9fff]")
LATIN_WORD = re.compile(r"[A-Za-z]{3,}")


@pytest.fixture(scope="module")
def conversations():
    return load_dataset(DATASET)


def reachable(graph, node: str) -> set[str]:
    """Where control may be after one customer message that arrives at `node`: a candidate of the node, or,
    when the node can hand back to triage, one of triage's candidates (the hand-back is re-dispatched once in
    the same turn, docs/routing.md), never a node outside the drawn edges and global nodes."""
    found = set(graph.candidates(node))
    if ROOT in found:
        found |= set(graph.candidates(ROOT))
    found.discard(node)
    return found


def rule_matches(rule: dict, message: str) -> bool:
    """Lenient on case and blanks: a label must agree with a rule under any reading of it."""
    text, value = message.strip().lower(), rule["value"].strip().lower()
    if rule["match"] == "exact":
        return " ".join(text.split()) == " ".join(value.split())
    if rule["match"] == "contains":
        return value in text
    return re.search(rule["value"], message, re.IGNORECASE) is not None


def test_every_conversation_builds_and_its_labels_follow_its_graph(conversations):
    for conv in conversations:
        graph = graph_from_dataset(conv)
        settings = conv.get("nodes") or {}
        node = ROOT
        for n, turn in enumerate(conv["turns"]):
            where = (conv["id"], n, turn["user"])
            expect = turn["expect"]
            assert expect == HUMAN or expect in graph.nodes, where
            assert expect == node or expect in reachable(graph, node), where
            for rule in (settings.get(node) or {}).get("rules", []):
                # Rules run before any mode: where one fires, the label is its target.
                if rule_matches(rule, turn["user"]):
                    assert expect == rule["to"], where
                    break
            if expect == HUMAN:
                # Control never comes back from people: the conversation ends at its first human turn.
                assert n == len(conv["turns"]) - 1, where
                assert "assistant" not in turn, where
            else:
                assert turn.get("assistant"), where
            node = expect


def test_rules_point_at_candidates_and_modes_are_known(conversations):
    for conv in conversations:
        graph = graph_from_dataset(conv)
        for key, cfg in (conv.get("nodes") or {}).items():
            assert key in graph.nodes, (conv["id"], key)
            assert cfg.get("mode") in (None, "router", "custom", "semantic", "tool"), (conv["id"], key)
            assert cfg.get("timing", "after_input") == "after_input", (conv["id"], key)
            assert (cfg.get("mode") == "custom") == bool(cfg.get("rule_prompt")), (conv["id"], key)
            for rule in cfg.get("rules", []):
                assert rule["match"] in ("exact", "contains", "regex"), (conv["id"], key, rule)
                assert rule["to"] in graph.candidates(key), (conv["id"], key, rule)


def test_descriptions_only_no_example_phrases(conversations):
    for conv in conversations:
        for scenario in conv["scenarios"]:
            assert scenario["examples"] == [], (conv["id"], scenario["key"])
            assert scenario["title"] and scenario["description"] and scenario["instruction"]
        for cfg in (conv.get("nodes") or {}).values():
            assert not cfg.get("examples"), conv["id"]


def test_size_shapes_languages_and_requests_for_people(conversations):
    turns = [t for c in conversations for t in c["turns"]]
    assert len(conversations) >= 20 and len(turns) >= 200
    assert len({c["id"] for c in conversations}) == len(conversations)
    assert any(len(c["turns"]) >= 15 for c in conversations)

    shapes = Counter(c["shape"] for c in conversations)
    assert set(shapes) <= {"star", "chain", "global", "router"}
    assert shapes["chain"] >= 4 and shapes["global"] >= 3 and shapes["router"] >= 4
    for conv in conversations:
        shape, keys = conv["shape"], {s["key"] for s in conv["scenarios"]}
        if shape == "star":
            assert not conv.get("edges") and not conv.get("global") and not conv.get("nodes"), conv["id"]
        if shape == "chain":
            assert any(a in keys and b in keys for a, b in conv["edges"]), conv["id"]
        if shape == "global":
            assert set(conv["global"]) <= keys, conv["id"]
        if shape == "router":
            assert any(cfg.get("mode") in ("router", "custom") for cfg in conv["nodes"].values()), conv["id"]

    langs = Counter(c["id"].split("-")[1] for c in conversations)
    assert set(langs) <= {"en", "zh", "mix"} and langs["en"] and langs["zh"] and langs["mix"]
    for conv in conversations:
        users = [t["user"] for t in conv["turns"]]
        lang = conv["id"].split("-")[1]
        if lang == "en":
            assert not any(CJK.search(u) for u in users), conv["id"]
        if lang == "zh":
            assert sum(bool(CJK.search(u)) for u in users) > len(users) * 0.7, conv["id"]
        if lang == "mix":
            assert any(CJK.search(u) and LATIN_WORD.search(u) for u in users), conv["id"]

    ending_with_people = sum(c["turns"][-1]["expect"] == HUMAN for c in conversations)
    assert 8 <= ending_with_people < len(conversations) / 2


def test_the_file_is_what_the_source_generates():
    spec = importlib.util.spec_from_file_location(
        "routing_generalise_generate", DATA / "routing_generalise_generate.py"
    )
    assert spec and spec.loader
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    assert generator.render(generator.build()) == DATASET.read_text(encoding="utf-8")
