"""`baseline-nearest`, the benchmark's floor: the closest "title: description" by a fixed margin over staying,
the builder's rules first, never people by similarity."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bench.routing.nearest import MARGIN, NearestStrategy
from captain.runtime.routing import HUMAN, DecisionRequest
from captain.runtime.routing.view import describe
from tests.captain.routing.support import rule, shop_graph

MESSAGE = "the message"


class SimilarityEncoder:
    """`MESSAGE` is one unit vector; every other text is as similar to it as the table says (0.0 if absent).
    Records the texts it was asked to encode."""

    def __init__(self, table: dict[str, float]) -> None:
        self.table = table
        self.encoded: list[str] = []

    def encode(self, texts):
        self.encoded += list(texts)
        rows = []
        for text in texts:
            s = 1.0 if text == MESSAGE else self.table.get(text, 0.0)
            rows.append([s, math.sqrt(1.0 - s * s)])
        return np.asarray(rows, dtype=np.float64)


def texts_of(graph) -> dict[str, str]:
    return {key: describe(node) for key, node in graph.nodes.items()}


def decide(graph, sims: dict[str, float], node: str = "assistant"):
    texts = texts_of(graph)
    encoder = SimilarityEncoder({texts[key]: s for key, s in sims.items()})
    decision = NearestStrategy(encoder).decide(DecisionRequest(graph, node, MESSAGE, [], "after_input"))
    return decision, encoder


@pytest.mark.parametrize(
    ("refunds", "expected"), [(0.30 + MARGIN + 0.01, "refunds"), (0.30 + MARGIN - 0.01, None)]
)
def test_switches_to_the_closest_description_when_it_beats_staying_by_the_margin(refunds, expected):
    graph = shop_graph()
    decision, encoder = decide(
        graph, {"assistant": 0.30, "refunds": refunds, "shipping": 0.10, "billing": 0.25}
    )
    assert decision.target == (expected or "assistant") and decision.parsed == "refunds"
    assert decision.mode == "nearest" and decision.llm_calls == 0
    assert decision.reason == f"refunds {refunds:.2f} vs stay 0.30"
    assert decision.scores["refunds"] == pytest.approx(refunds) and decision.scores["assistant"] == 0.3
    # Descriptions only: the example phrases ("I want a refund", ...) are never compared with.
    texts = texts_of(graph)
    assert encoder.encoded == [MESSAGE, *(texts[k] for k in ["assistant", "refunds", "shipping", "billing"])]


def test_the_builders_rules_come_first():
    graph = shop_graph()
    graph.nodes["assistant"].rules = [rule("contains", "message", "billing")]
    decision, encoder = decide(graph, {"refunds": 0.9})
    assert decision.target == "billing" and decision.mode == "rule" and encoder.encoded == []


def test_people_are_never_chosen_by_similarity():
    graph = shop_graph()
    decision, encoder = decide(graph, {"assistant": 0.10, "refunds": 0.20, HUMAN: 0.95})
    assert decision.target == "refunds" and HUMAN not in decision.candidates and HUMAN not in decision.scores
    assert texts_of(graph)[HUMAN] not in encoder.encoded


def test_a_rule_may_still_hand_to_people():
    graph = shop_graph()
    graph.nodes["refunds"].rules = [rule("contains", "message", HUMAN)]
    decision, _ = decide(graph, {}, node="refunds")
    assert decision.target == HUMAN and decision.mode == "rule"


def test_a_node_whose_only_candidate_is_people_stays():
    graph = shop_graph(edges=[("assistant", "refunds")])  # refunds has no way out but the global human node
    decision, encoder = decide(graph, {HUMAN: 0.95}, node="refunds")
    assert decision.target == "refunds" and decision.reason == "no candidates" and encoder.encoded == []
