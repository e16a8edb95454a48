"""Router and custom modes on a customer's message: the router model chooses only among what the encoder's
evidence allows (`captain/runtime/routing/guided.py`), and is not asked when the evidence leaves nothing to
choose."""

from __future__ import annotations

import pytest

from captain.runtime.routing import DecisionRequest, OursStrategy

from .support import KeywordEncoder, ScriptedRouter, own_calibrator, shop_graph

KEYWORDS = KeywordEncoder(["refund", "money", "parcel", "delivery", "invoice", "payment"])


@pytest.fixture(autouse=True)
def _own_calibrator(monkeypatch):
    own_calibrator(monkeypatch)


def decide(mode: str, message: str, *answers: str, node: str = "assistant", routers: bool = True):
    router = ScriptedRouter(*answers)
    strategy = OursStrategy(encoder=KEYWORDS, routers=router.factory if routers else None)
    graph = shop_graph(default_mode=mode)
    decision = strategy.decide(DecisionRequest(graph, node, message, [], "after_input"))
    return decision, router


@pytest.mark.parametrize("mode", ["router", "custom"])
def test_a_message_with_no_evidence_for_any_candidate_stays_without_a_router_call(mode):
    decision, router = decide(mode, "hello, good to see you", '{"route": "billing"}')
    assert decision.target == "assistant" and decision.mode == mode
    assert router.calls == []
    assert decision.reason.startswith("evidence: no candidate with evidence"), decision.reason


def test_router_mode_takes_a_clear_switch_without_asking_the_model():
    decision, router = decide("router", "I want my money back, a refund please", '{"route": "stay"}')
    assert (decision.target, router.calls) == ("refunds", [])
    assert decision.reason.startswith("evidence: refunds"), decision.reason


def test_custom_mode_puts_a_clear_switch_to_the_model_with_stay_and_the_shortlist_only():
    """The builder's rule may keep the message ("stay on claims for tracking numbers"): the model is asked, and
    sees staying and the candidates the evidence allows, nothing else."""
    decision, router = decide("custom", "I want my money back, a refund please", '{"route": "stay"}')
    assert len(router.calls) == 1
    assert router.calls[0]["enum"] == ["stay", "refunds"]
    assert decision.target == "assistant"  # the model, reading the rule, kept it
    assert "(offered: refunds)" in decision.reason


def test_an_unclear_choice_offers_the_close_candidates_and_the_models_pick_stands():
    decision, router = decide("router", "refund for the parcel", '{"route": "shipping"}')
    enum = router.calls[0]["enum"]
    assert enum is not None and set(enum) == {"stay", "refunds", "shipping"}  # billing has no evidence
    assert decision.target == "shipping"


def test_in_router_mode_a_stay_is_vetoed_when_switching_is_clear_and_only_the_target_is_not():
    decision, router = decide("router", "refund for the parcel", '{"route": "stay"}')
    assert len(router.calls) == 1
    assert decision.target in ("refunds", "shipping")
    assert decision.target == decision.parsed or decision.parsed == "stay"
    assert "stay vetoed" in decision.reason


def test_without_a_router_model_an_unclear_case_is_decided_by_the_evidence_alone():
    decision, _ = decide("router", "refund for the parcel", routers=False)
    assert decision.target in ("refunds", "shipping")
    assert decision.reason.startswith("evidence: no router model configured"), decision.reason


def test_the_models_reply_check_after_its_reply_still_sees_every_candidate():
    """After the node's own reply (the builder's timing machinery) the evidence does not narrow the choice."""
    router = ScriptedRouter('{"route": "assistant"}')
    strategy = OursStrategy(encoder=KEYWORDS, routers=router.factory)
    graph = shop_graph(default_mode="router")
    decision = strategy.decide(
        DecisionRequest(graph, "refunds", "Your refund is on its way.", [], "after_reply")
    )
    assert router.calls[0]["enum"] == ["stay", "assistant", "human"]  # refunds' edges: triage and people
    assert decision.target == "assistant"  # against the evidence (the reply is all about refunds)
