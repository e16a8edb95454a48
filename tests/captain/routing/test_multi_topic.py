"""A message that asks two things goes to the first topic in the text, and the node that answers is told about
the second (`captain/runtime/routing/multi.py`)."""

from __future__ import annotations

from typing import Any

import pytest

from captain.runtime.routing import DecisionRequest, OursStrategy, Policy
from captain.runtime.routing.multi import clauses
from captain.runtime.team import Team, TeamRunner, TurnInput
from captain.runtime.types import Reply, RunResult, Usage

from .support import KeywordEncoder, own_calibrator, shop_graph

KEYWORDS = KeywordEncoder(["refund", "money", "parcel", "delivery", "invoice", "payment"])


@pytest.fixture(autouse=True)
def _own_calibrator(monkeypatch):
    own_calibrator(monkeypatch)


def decide(message: str, *, node: str = "assistant", mode: str = "semantic"):
    graph = shop_graph(default_mode=mode)
    return OursStrategy(encoder=KEYWORDS).decide(DecisionRequest(graph, node, message, [], "after_input"))


def test_clauses_split_requests_not_short_fillers():
    assert clauses("Hi! Where is my parcel? And I need an invoice for May") == [
        "Where is my parcel",
        "I need an invoice for May",
    ]
    assert clauses("我的包裹还没到，另外帮我开一张发票") == ["我的包裹还没到", "帮我开一张发票"]
    assert clauses("ok thanks") == []


@pytest.mark.parametrize("mode", ["semantic", "router"])
def test_two_topics_go_to_the_first_and_name_the_second(mode):
    decision = decide(
        "where is my parcel, the delivery is late? and I need an invoice for the payment", mode=mode
    )
    assert (decision.target, decision.also) == ("shipping", "billing"), decision.reason
    assert decision.reason.startswith("two topics: shipping")
    # The other order: the first topic written wins, whichever is louder.
    decision = decide(
        "I need an invoice for the payment, and where is my parcel? the delivery is late", mode=mode
    )
    assert (decision.target, decision.also) == ("billing", "shipping"), decision.reason


def test_a_clear_judgement_of_the_whole_message_stands_and_the_other_topic_is_named():
    """A first clause that sets the scene must not move a message whose whole is clearly about something else."""
    decision = decide(
        "about the invoice I have, where is my parcel? the delivery is late and the parcel tracking is stuck"
    )
    assert (decision.target, decision.also) == ("shipping", "billing"), decision.reason
    assert decision.reason.startswith("shipping")  # the whole message's judgement, not the clauses'


def test_a_message_about_one_topic_names_no_second():
    decision = decide("where is my parcel? the delivery is late, and the parcel tracking shows nothing")
    assert decision.target == "shipping" and decision.also is None


def test_at_a_specialist_the_first_topic_its_own_keeps_the_message_and_names_the_second():
    decision = decide(
        "my refund money has not come back, and I need an invoice for the payment", node="refunds"
    )
    assert (decision.target, decision.also) == ("refunds", "billing"), decision.reason


def test_a_request_for_a_person_is_never_split_into_topics():
    decision = decide("I want to talk to a real person, and where is my parcel delivery?")
    assert decision.target == "human" and decision.also is None


class RecordingAnswerer:
    def __init__(self) -> None:
        self.seen: list[tuple[str, list[dict[str, Any]]]] = []

    def __call__(self, node: str, messages: list[dict[str, Any]]) -> RunResult:
        self.seen.append((node, messages))
        return RunResult(outcome=Reply("ok"), agent_key=node, usage=Usage(), route=[node], events=[])


def test_the_node_in_charge_is_told_about_the_second_topic_and_only_then():
    answer = RecordingAnswerer()
    runner = TeamRunner(
        team=Team(agents={}, graph=shop_graph()),
        strategy=OursStrategy(encoder=KEYWORDS),
        answer=answer,
        policy=Policy(model_calls=0),
    )
    message = "where is my parcel, the delivery is late? and I need an invoice for the payment"
    turn = runner.run(TurnInput(history=[], batch=[message], current="assistant"))
    node, messages = answer.seen[-1]
    assert node == "shipping" and turn.dispatch.node == "shipping"
    assert messages[-2] == {"role": "user", "content": message}  # the customer's words are unchanged
    note = messages[-1]
    assert note["role"] == "system" and "Billing: invoice payment charge" in note["content"]

    runner.run(TurnInput(history=[], batch=["where is my parcel? the delivery is late"], current="assistant"))
    assert answer.seen[-1][1][-1]["role"] == "user"  # one topic: no note
