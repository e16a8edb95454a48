"""The claim check reads each agent's instructions once and keeps the reading (captain.runtime.knowledge.claims):
reading the texts one by one must allow exactly what reading them joined by line breaks allowed, at the seams
too (a number, a link, an address, a currency or a CJK run at the end of one text and the start of the next)."""

from __future__ import annotations

import pytest

from captain.runtime.knowledge.claims import turn_check
from captain.runtime.knowledge.grounding import Evidence
from captain.runtime.knowledge.tokens import tokens

SEAMS = [
    ("Opening hours 9:00-18:00", "2026-11-29 is today"),
    ("Write to help@acme.example", "support@acme.example answers too"),
    ("See https://acme.example/returns", "www.acme.example/faq for more"),
    ("Prices in USD", "EUR or € also accepted, 1,299.00 dollars"),
    ("我们的退货政策", "退款需要七天"),
    ("Refunds take 14", "30 days for exchanges"),
    ("", "Only context"),
    ("Only instructions", ""),
]


@pytest.mark.parametrize(("first", "second"), SEAMS)
def test_texts_read_one_by_one_allow_what_their_join_allowed(first, second):
    joined = f"{first}\n{second}"
    assert Evidence.joined([Evidence.of([first]), Evidence.of([second])]) == Evidence.of([joined])
    assert set(tokens(first)) | set(tokens(second)) == set(tokens(joined))


def test_the_turn_check_reads_the_same_from_split_instructions():
    pairs = [(first, second) for first, second in SEAMS]
    conversation = ["Can I return it after 30 days?", "Yes, within 30 days."]

    def check(instructions):
        return turn_check(
            conversation=conversation,
            instructions=instructions,
            sources=[],
            question="Can I return it after 30 days?",
            language="en",
            encode=None,
            sentence_support=None,
        )

    joined = check([f"{a}\n{b}" for a, b in pairs])
    split = check([text for pair in pairs for text in pair])
    assert split.free == joined.free
    assert split.free_text == joined.free_text
    assert split.told == joined.told
    assert split.free.numbers >= {"9", "18", "2026", "1299", "14", "30"}
