"""The deterministic grounding check and citations (no model, no database)."""

from __future__ import annotations

import pytest

from captain.runtime.knowledge import Evidence, Source, cited_numbers, strip_markers, unsupported_facts

SOURCES = [
    "The Monthly plan costs €49.90 and includes 2 batteries.",
    "Our shop is open 9:00-18:00, Monday to Saturday. Write to help@volta.example or see "
    "https://volta.example/plans for details.",
    "押金为 299 元，退还需要 7 个工作日。",
]
EVIDENCE = Evidence.of(SOURCES)


@pytest.mark.parametrize(
    "reply",
    [
        "The Monthly plan is €49.90 a month and comes with 2 batteries.",
        "We're open from 9am to 6pm, Monday to Saturday.",  # 18:00 supports "6 pm"
        "You can write to help@volta.example or read https://volta.example/plans.",
        "1. Open the app.\n2. Tap Plans.",  # list markers are structure, not claims
        "押金是299元，7个工作日内退还。",
        "It costs 49.9 EUR [1].",  # the same value spelled differently, a citation marker
        "Sorry, I don't know. Shall I connect you with a person?",
    ],
)
def test_a_reply_whose_specifics_are_all_in_the_evidence_passes(reply):
    assert unsupported_facts(reply, EVIDENCE) == []


@pytest.mark.parametrize(
    ("reply", "missing"),
    [
        ("The Monthly plan costs €59.", ["59"]),
        ("It costs $49.90.", ["$"]),  # the right number in the wrong currency
        ("Our Wi-Fi password is 12345678.", ["12345678"]),
        ("The top speed is 100 km/h.", ["100"]),
        ("Mail support@volta.example.", ["support@volta.example"]),
        ("See https://volta.example/prices for prices.", ["https://volta.example/prices"]),
        ("押金是 500 元。", ["500"]),
        ("We open at 8:30.", ["8:30"]),
    ],
)
def test_an_invented_specific_is_named(reply, missing):
    assert unsupported_facts(reply, EVIDENCE) == missing


def _sources() -> list[Source]:
    return [
        Source("faq", "faq:1", "How much is the Monthly plan?", "The Monthly plan costs €49.90."),
        Source("document", "chunk:7", "Shop > Opening hours", "We are open 9:00-18:00 on weekdays."),
        Source("document", "chunk:8", "Returns", "Bikes can be returned at any station."),
    ]


def test_citations_come_from_markers_shared_specifics_and_shared_words():
    sources = _sources()
    assert cited_numbers("The Monthly plan costs €49.90.", sources) == [1]
    assert cited_numbers("We are open on weekdays [2].", sources) == [2]
    assert cited_numbers("Bikes can be returned at any of our stations.", sources) == [3]
    assert cited_numbers("Hello! How can I help you today?", sources) == []
    assert cited_numbers("See [9] for more.", sources) == []  # a number no source has is ignored


def test_markers_are_removed_from_what_the_customer_reads():
    assert strip_markers("The plan costs €49.90 [1]. Open 9:00 [2].") == "The plan costs €49.90. Open 9:00."
