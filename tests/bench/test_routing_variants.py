"""The routing benchmark's dataset variants, graph shapes, people figures, drafted examples and the corrections
replay, on tiny hand-made datasets."""

from __future__ import annotations

import json
from typing import Any

from bench.routing.corrections import corrections_from, replay, split_halves
from bench.routing.drafted import draft_dataset
from bench.routing.figures import PassResult, StrategyResult, TurnRecord, shape_accuracy
from bench.routing.harness import build_strategy, run_pass
from bench.routing.variants import add_examples, has_examples, shapes_of, variant_conversations
from captain.runtime.routing import Decision
from tests.captain.routing.support import KeywordEncoder


def shop(conv_id: str, turns: list[tuple[str, str]], **extra: Any) -> dict[str, Any]:
    return {
        "id": conv_id,
        "assistant": {"name": "Shop", "description": "Customer support of a shop."},
        "scenarios": [
            {
                "key": "refunds",
                "title": "Refunds",
                "description": "refund money back",
                "examples": ["refund"],
            },
            {"key": "shipping", "title": "Shipping", "description": "parcel delivery", "examples": []},
        ],
        "turns": [{"user": u, "expect": e, "assistant": "ok"} for u, e in turns],
        **extra,
    }


def test_stripped_and_drafted_variants_replace_examples_and_leave_the_dataset_alone():
    convs = [shop("a", [("hi", "triage")])]
    stripped = variant_conversations("stripped", convs)
    assert not has_examples(stripped) and has_examples(convs)
    drafted = variant_conversations("drafted", convs, {("Shop", "shipping"): ["where is my parcel"]})
    by_key = {s["key"]: s["examples"] for s in drafted[0]["scenarios"]}
    assert by_key == {"refunds": [], "shipping": ["where is my parcel"]}
    assert convs[0]["scenarios"][0]["examples"] == ["refund"]  # a deep copy
    extended = add_examples(
        convs, {("Shop", "refunds"): ["money back please"], ("Shop", "triage"): ["hello"]}
    )
    assert extended[0]["scenarios"][0]["examples"] == ["refund", "money back please"]
    assert extended[0]["nodes"]["triage"]["examples"] == ["hello"]


def test_the_router_mode_variant_puts_every_default_node_on_a_router_model_and_strips_examples():
    convs = [shop("a", [("hi", "triage")], nodes={"shipping": {"mode": "custom", "rule_prompt": "stay"}})]
    routed = variant_conversations("router-mode", convs)
    assert {k: v["mode"] for k, v in routed[0]["nodes"].items()} == {
        "triage": "router",
        "refunds": "router",
        "shipping": "custom",  # the builder's explicit choice stays
    }
    assert not has_examples(routed) and shapes_of(routed[0]) == {"router"}
    assert "triage" not in (convs[0].get("nodes") or {})  # a deep copy


def test_stays_switches_and_hand_backs_are_scored_apart_by_what_the_label_asks():
    turns = [
        TurnRecord(
            "a", 1, "triage", "triage", "triage", ["triage"], [], previous="triage"
        ),  # stay (triage's own)
        TurnRecord("a", 2, "triage", "refunds", "triage", ["triage"], [], previous="triage"),  # missed switch
        TurnRecord("a", 3, "triage", "refunds", "refunds", ["triage"], [], previous="refunds"),  # stay
        TurnRecord(
            "a", 4, "refunds", "triage", "refunds", ["refunds"], [], previous="refunds"
        ),  # missed back
    ]
    f = StrategyResult("ours", PassResult(turns), PassResult()).figures()
    assert (f["stay_accuracy"], f["stay_turns"]) == (1.0, 2)
    assert (f["switch_accuracy"], f["switch_turns"]) == (0.0, 1)
    assert (f["back_accuracy"], f["back_turns"]) == (0.0, 1)
    assert (f["triage_own_accuracy"], f["triage_own_turns"]) == (0.5, 2)


def test_two_topic_messages_count_the_first_reached_and_the_second_named_apart():
    def told(also: str | None) -> list[Decision]:
        return [Decision("triage", "after_input", "semantic", [], "refunds", also=also)]

    turns = [
        TurnRecord("a", 1, "triage", "refunds", "refunds", [], told("billing"), multi=("refunds", "billing")),
        TurnRecord("a", 2, "triage", "refunds", "refunds", [], told(None), multi=("refunds", "billing")),
        TurnRecord("a", 3, "triage", "billing", "refunds", [], told("billing"), multi=("billing", "refunds")),
        TurnRecord("b", 1, "triage", "refunds", "refunds", [], told("shipping")),  # one topic, a second named
    ]
    f = StrategyResult("ours", PassResult(turns), PassResult()).figures()
    assert (f["multi_accuracy"], f["multi_turns"]) == (round(2 / 3, 4), 3)
    assert f["multi_both_accuracy"] == round(1 / 3, 4)
    assert f["second_topic_on_single"] == 1


def test_the_replay_records_the_label_each_turn_started_from():
    encoder = KeywordEncoder(["refund", "parcel"])
    strategy, policy = build_strategy(
        "ours-nomodel", encoder=encoder, router_for=lambda _e: None, tool_decider=None
    )
    conv = shop("a", [("hi", "triage"), ("refund please", "refunds"), ("thanks", "refunds")])
    result = run_pass([conv], strategy, policy, forced=False)
    assert [t.previous for t in result.turns] == ["triage", "triage", "refunds"]
    assert [t.kind for t in result.turns] == ["stay", "switch", "stay"]


def test_shapes_of_a_conversation():
    assert shapes_of(shop("a", [])) == {"star"}
    chain = shop("b", [], edges=[["triage", "refunds"], ["refunds", "shipping"]], **{"global": ["shipping"]})
    assert shapes_of(chain) == {"chain", "global"}
    assert shapes_of(shop("c", [], nodes={"triage": {"mode": "router"}})) == {"router"}


def test_wrong_jumps_to_people_and_shapes_are_counted_on_the_free_pass():
    turns = [
        TurnRecord("a", 1, "triage", "refunds", "human", ["triage", "human"], []),
        TurnRecord("a", 2, "human", "human", "human", ["human"], []),
        TurnRecord("b", 1, "triage", "triage", "triage", ["triage"], []),
    ]
    result = StrategyResult("ours", PassResult(turns), PassResult())
    figures = result.figures()
    assert figures["wrong_to_people"] == 1 and figures["wrong_to_people_pct"] == 33.33
    assert figures["people_requests"] == 1 and figures["people_requests_reached"] == 1
    convs = [shop("a", [], nodes={"refunds": {"mode": "custom"}}), shop("b", [])]
    shapes = shape_accuracy(result.free, convs)
    assert shapes["router"]["turns"] == 2 and shapes["router"]["accuracy"] == 0.5
    assert shapes["star"] == {"accuracy": 1.0, "turns": 1, "conversations": 1}


def test_corrections_are_missed_switches_only_and_replayed_on_the_second_halves():
    encoder = KeywordEncoder(["refund", "parcel", "money"])
    first = shop(
        "a1",
        [
            ("the box arrived broken, undo the order", "refunds"),  # no keyword: a missed switch
            ("the parcel itself was fine", "refunds"),  # a follow-up the router moves away: not a correction
        ],
    )
    second = shop("a2", [("I want my money back", "refunds"), ("thanks", "refunds")])
    other = shop("x", [("hello", "triage")])
    other["assistant"] = {"name": "Solo", "description": "one conversation only"}
    halves = split_halves([first, second, other])
    assert [c["id"] for c in halves[0]] == ["a1"] and [c["id"] for c in halves[1]] == ["a2"]
    stripped = variant_conversations("stripped", [first, second])
    strategy, policy = build_strategy(
        "ours-nomodel", encoder=encoder, router_for=lambda e: None, tool_decider=None
    )
    forced = run_pass(stripped[:1], strategy, policy, forced=True)
    assert [t.correct for t in forced.turns] == [False, False]
    found = corrections_from(stripped[:1], forced)
    # Only messages that should have moved the conversation count; follow-ups at the right node do not.
    assert found == [(("Shop", "refunds"), "the box arrived broken, undo the order")]
    points = replay(
        stripped, strategy, policy, lambda c, s, p, f: run_pass(c, s, p, forced=f), counts=(0, None)
    )
    assert points and points[0].corrections == 0 and points[0].turns == 2
    assert [p.corrections for p in points] == [0, 1]


def test_drafts_use_the_products_prompt_dedup_across_nodes_and_the_cache(tmp_path):
    asked: list[tuple[str, str]] = []

    def ask(system: str, user: str, settings) -> str:
        asked.append((system, user))
        assert settings.response_format["json_schema"]["name"] == "routing_examples"
        return json.dumps({"examples": ["where is it?", "Where is it", "my parcel is late"]})

    convs = [shop("a", []), shop("b", [])]
    cache = tmp_path / "drafts.json"
    drafts = draft_dataset(convs, ask, cache)
    assert len(asked) == 2  # one request per (assistant, scenario), not per conversation
    assert (
        "Specialist: Refunds" in asked[0][1] and "Other specialists (not this one): Shipping" in asked[0][1]
    )
    assert drafts[("Shop", "refunds")] == ["where is it?", "my parcel is late"]
    assert drafts[("Shop", "shipping")] == []  # the same phrases belong to the first node already
    again = draft_dataset(convs, lambda *a: (_ for _ in ()).throw(AssertionError("cached")), cache)
    assert again == drafts
