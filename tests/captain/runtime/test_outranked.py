"""A value the evidence ranks clearly below another sentence's value of the same kind is refused
(`captain.runtime.knowledge.outranked`): the small model's copied neighbour, which the words alone let through."""

from __future__ import annotations

from captain.runtime.knowledge.claims import turn_check
from captain.runtime.knowledge.units import units_of

# Words cannot tell these apart for the question: it shares none with either source ("term" is in both), so the
# words' check reads the reply's own words, which its source always holds. The evidence ranking (the encoder's
# cosine with the question) can.
TRANSFER = ("Transfers", "Moving a booking to a later term: ¥500 per move.")
FEES = ("Fees", "Intensive course: ¥16,800 per term.")
QUESTION = "what does it cost to switch to another term?"


def ranking(**by_source: float) -> dict[str, float]:
    """Evidence scores per sentence as `evidence_ranking` gives them: here one score per source's sentences."""
    named = {"transfer": TRANSFER, "fees": FEES}
    return {u.text: by_source[key] for key, source in named.items() for u in units_of([source])}


def problems(
    reply: str, scores: dict[str, float], *, tool_results: tuple[tuple[str, str], ...] = ()
) -> list[str]:
    check = turn_check(
        conversation=[QUESTION],
        instructions=[],
        sources=[TRANSFER, FEES],
        tool_results=tool_results,
        question=QUESTION,
        language="en",
        encode=None,
        sentence_support=None,
        asked=QUESTION,
        ranking=scores,
    )
    return [f.problem for f in check.findings(reply)]


def test_the_course_fee_given_for_the_cost_of_switching_terms_is_refused_when_the_evidence_ranks_the_move_first() -> (
    None
):
    reply = "The Intensive course costs ¥16,800 per term."
    assert "wrong_context" not in problems(reply, {})
    assert "wrong_context" in problems(reply, ranking(transfer=0.82, fees=0.55))


def test_the_refusal_names_the_sentence_that_answers() -> None:
    check = turn_check(
        conversation=[QUESTION],
        instructions=[],
        sources=[TRANSFER, FEES],
        question=QUESTION,
        language="en",
        encode=None,
        sentence_support=None,
        asked=QUESTION,
        ranking=ranking(transfer=0.82, fees=0.55),
    )
    found = [
        f
        for f in check.findings("The Intensive course costs ¥16,800 per term.")
        if f.problem == "wrong_context"
    ]
    assert found and "¥500" in found[0].detail


def test_the_better_ranked_value_itself_passes_and_so_does_a_close_rank() -> None:
    assert problems("Moving a booking costs ¥500 per move.", ranking(transfer=0.82, fees=0.55)) == []
    assert problems("Moving a booking costs ¥500 per move.", ranking(transfer=0.55, fees=0.82)) != []
    # Within the margin the ranking does not tell the two apart: the words' check alone decides.
    assert "wrong_context" not in problems(
        "The Intensive course costs ¥16,800 per term.", ranking(transfer=0.57, fees=0.55)
    )


def test_a_reply_that_gives_the_better_ranked_value_too_is_not_refused_for_an_addition() -> None:
    reply = "Moving a booking costs ¥500 per move. The Intensive course itself costs ¥16,800 per term."
    assert "wrong_context" not in problems(reply, ranking(transfer=0.82, fees=0.55))


def test_a_value_from_a_tool_result_is_not_judged_by_the_knowledge_ranking() -> None:
    # The order tool said ¥16,800: a tool's result is a source in its own right, not a ranked sentence.
    tool = (("order_lookup", '{"order": "A7", "paid": "¥16,800"}'),)
    reply = "Your order was paid: ¥16,800."
    assert "wrong_context" not in problems(reply, ranking(transfer=0.82, fees=0.55), tool_results=tool)


def test_in_a_follow_up_the_answer_already_given_is_no_rival() -> None:
    """ "and to switch?" after the fee was given: the fee's sentence still ranks first (the customer's turn before
    is part of the query), but its value was said; the new value is not refused for it."""
    conversation = ["how much per term?", "Intensive course: ¥16,800 per term.", "and to switch?"]

    def problems_after(given: list[str]) -> list[str]:
        check = turn_check(
            conversation=given,
            instructions=[],
            sources=[TRANSFER, FEES],
            question="how much per term?\nand to switch?",
            language="en",
            encode=None,
            sentence_support=None,
            asked="and to switch?",
            ranking=ranking(transfer=0.55, fees=0.82),
        )
        return [f.problem for f in check.findings("Moving a booking to a later term costs ¥500 per move.")]

    assert problems_after(conversation) == []
    # Had the fee not been said, the better-ranked fee would stand against it.
    assert problems_after([conversation[0], conversation[2]]) == ["wrong_context"]


# Three sentences of a shop's help centre (made up for the test): two about reserving, one about warranties. The reserve
# sentences state no value of the reply's kind, so no same-kind rival outranks the warranty's years.
RESERVE = (
    "Reserving in the showroom",
    "We hold a sofa for you for three days. Ask the showroom staff to reserve it.",
)
WARRANTY = ("Warranty", "Sofa frames have a 10-year warranty, counted from delivery.")
RESERVE_QUESTION = "can I reserve a sofa at the showroom and think about it? how long do you hold it"


def reserve_problems(reply: str, scores: dict[str, float]) -> list[str]:
    check = turn_check(
        conversation=[RESERVE_QUESTION],
        instructions=[],
        sources=[RESERVE, WARRANTY],
        question=RESERVE_QUESTION,
        language="en",
        encode=None,
        sentence_support=None,
        asked=RESERVE_QUESTION,
        ranking=scores,
    )
    return [f.problem for f in check.findings(reply)]


def test_a_value_from_a_sentence_with_two_others_ranked_above_it_is_refused() -> None:
    hold, ask = (u.text for u in units_of([RESERVE]))
    (warranty,) = (u.text for u in units_of([WARRANTY]))
    reply = "Sofa frames have a 10-year warranty, counted from delivery."
    # Two reserve sentences above the warranty: the quoted neighbour is refused.
    assert "wrong_context" in reserve_problems(reply, {hold: 0.81, ask: 0.74, warranty: 0.52})
    # One sentence above is not enough (a right reply's second value often comes from the second sentence).
    assert "wrong_context" not in reserve_problems(reply, {hold: 0.81, ask: 0.40, warranty: 0.52})
    # Without a ranking, only the words' check decides, and the reply's words are its source's.
    assert "wrong_context" not in reserve_problems(reply, {})


def test_a_reply_that_also_gives_the_first_sentences_value_is_not_refused_for_a_buried_addition() -> None:
    fee = (
        "Reserving",
        "A reservation costs RM 50, taken off the sofa's price. Ask the showroom staff to reserve it.",
    )
    costs, ask = (u.text for u in units_of([fee]))
    (warranty,) = (u.text for u in units_of([WARRANTY]))

    def found(reply: str) -> list[str]:
        check = turn_check(
            conversation=[RESERVE_QUESTION],
            instructions=[],
            sources=[fee, WARRANTY],
            question=RESERVE_QUESTION,
            language="en",
            encode=None,
            sentence_support=None,
            asked=RESERVE_QUESTION,
            ranking={costs: 0.81, ask: 0.74, warranty: 0.52},
        )
        return [f.problem for f in check.findings(reply)]

    assert "wrong_context" in found("Sofa frames have a 10-year warranty.")
    assert "wrong_context" not in found(
        "A reservation costs RM 50. Sofa frames also have a 10-year warranty."
    )
