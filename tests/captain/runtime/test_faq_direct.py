"""An approved FAQ answer sent as written only when it is the question asked: not when the customer names a specific
thing that the entry never mentions and a found document passage states (the entry answers a neighbouring
question). Pure functions over hand-built retrievals; the run path has its own test in tests/captain/answering."""

from __future__ import annotations

from captain.runtime.knowledge.faq_direct import faq_direct, named_elsewhere
from captain.runtime.knowledge.sources import Retrieval, Source
from captain.runtime.knowledge.tokens import tokens

DAY_RENTAL = Source(
    "faq", "faq:1", "How much is a day rental?", "A day rental costs S$25 until 22:00.", score=0.74
)
ADD_ONS = Source(
    "document",
    "chunk:7",
    "Day rental > Add-ons",
    "A child seat costs S$5 per day. A second battery costs S$8 per day.",
    score=0.52,
)
RENTAL_TERMS = Source(
    "document", "chunk:3", "Day rental > Terms", "Bring the bike back by 22:00.", score=0.45
)


def retrieval(
    query: str, *sources: Source, counts: dict[str, int] | None = None, passages: int = 120
) -> Retrieval:
    # Word counts as the assistant's passages would give them: a word the query names is in one passage unless
    # the test says otherwise.
    found = {w: 1 for w in tokens(query)}
    found.update(counts or {})
    return Retrieval(query=query, sources=sources, term_passages=found, passages=passages)


def test_the_closest_entry_is_not_the_answer_when_it_leaves_out_the_thing_a_passage_states():
    query = "how much is a child seat on a day rental?"
    found = retrieval(query, DAY_RENTAL, ADD_ONS)
    choice = faq_direct(found, query, threshold=0.65, margin=0.10)
    assert choice.entry is None
    assert choice.left_out == ("child", "seat")


def test_the_entry_is_sent_when_the_question_names_nothing_it_leaves_out():
    query = "how much does a day rental cost?"
    choice = faq_direct(retrieval(query, DAY_RENTAL, ADD_ONS), query, threshold=0.65, margin=0.10)
    assert choice.entry == DAY_RENTAL
    assert choice.left_out == ()


def test_a_word_no_found_passage_states_does_not_count():
    # "amex" is in no found document passage: the help centre says nothing about it, so it tells nothing about
    # which entry answers (an answer listing the cards accepted is still the right one).
    query = "how much is a day rental, can I pay with amex?"
    choice = faq_direct(retrieval(query, DAY_RENTAL, RENTAL_TERMS), query, threshold=0.65, margin=0.10)
    assert choice.entry == DAY_RENTAL


def test_a_common_word_of_the_help_centre_does_not_count():
    # "battery" is in 9 of 120 passages: a topic word, not one specific thing.
    query = "how much is a day rental with battery?"
    found = retrieval(query, DAY_RENTAL, ADD_ONS, counts={"battery": 9})
    assert faq_direct(found, query, threshold=0.65, margin=0.10).entry == DAY_RENTAL
    # In a help centre of 2,000 passages, 9 is under 1%: specific again.
    big = retrieval(query, DAY_RENTAL, ADD_ONS, counts={"battery": 9}, passages=2000)
    assert named_elsewhere(big, query, DAY_RENTAL) == ("battery",)


def test_chinese_words_are_read_as_the_search_reads_them():
    entry = Source("faq", "faq:2", "短租多少钱？", "短租一天 25 新元，22:00 前还车。", score=0.69)
    passage = Source(
        "document", "chunk:9", "短租 > 附加", "儿童座椅每天 5 新元，第二块电池每天 8 新元。", score=0.5
    )
    query = "短租加一个儿童座椅多少钱"
    choice = faq_direct(retrieval(query, entry, passage), query, threshold=0.65, margin=0.10)
    assert choice.entry is None
    assert {"儿童", "座椅"} <= set(choice.left_out)


def test_the_older_rules_still_hold():
    query = "how much does a day rental cost?"
    low = Source("faq", "faq:1", DAY_RENTAL.title, DAY_RENTAL.text, score=0.6)
    assert faq_direct(retrieval(query, low), query, threshold=0.65, margin=0.10).entry is None
    close = Source("faq", "faq:4", "How much is a week rental?", "A week rental costs S$120.", score=0.7)
    assert faq_direct(retrieval(query, DAY_RENTAL, close), query, threshold=0.65, margin=0.10).entry is None
    assert (
        faq_direct(retrieval("短租多少钱", DAY_RENTAL), "短租多少钱", threshold=0.65, margin=0.10).entry
        is None
    )
    assert faq_direct(retrieval(query, DAY_RENTAL), query, threshold=None, margin=0.10).entry is None
