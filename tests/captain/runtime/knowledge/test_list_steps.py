"""A reply written as numbered steps is read for what its steps say, not for their numbers: cut into sentences,
"To reset the light: 1." ended a sentence, and its "1" was refused as a value no source states."""

from __future__ import annotations

from captain.runtime.knowledge.claims import turn_check

FILTER = (
    "How do I reset the filter light?",
    "Switch the purifier off. After fitting the new filter, press and hold the Timer button for 5 seconds.",
)
QUESTION = "the light is still red after the new filter, what do i do"


def problems(reply: str) -> list[tuple[str, tuple[str, ...]]]:
    check = turn_check(
        conversation=[QUESTION],
        instructions=[],
        sources=[FILTER],
        question=QUESTION,
        language="en",
        encode=None,
        sentence_support=None,
        asked=QUESTION,
    )
    return [(f.problem, f.written) for f in check.findings(reply)]


def test_the_numbers_of_numbered_steps_are_not_values():
    reply = "To reset the light:\n\n1. Switch the purifier off.\n2. Press and hold the Timer button for 5 seconds."
    assert problems(reply) == []


def test_a_value_in_a_step_is_still_read():
    reply = "To reset the light:\n\n1. Switch the purifier off.\n2. Press and hold the Timer button for 9 seconds."
    assert ("not_in_sources", ("9",)) in problems(reply)
