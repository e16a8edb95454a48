"""A "no" answered "yes", and one of two things picked when the customer named neither: the two ways a reply goes
wrong with every value in a source. Without a model: the check's pure functions over a small help centre."""

from __future__ import annotations

from captain.runtime.knowledge.claims import turn_check
from captain.runtime.knowledge.conflicts import (
    answers_no,
    choices,
    clarifying_question,
    is_yes_no_question,
    named_one,
    negates,
    unsourced_topic,
)
from captain.runtime.knowledge.tokens import tokens
from captain.runtime.knowledge.units import Unit, units_of

LUGGAGE = (
    "Luggage",
    "## Bicycles\nBicycles travel on the express boat for €3 per trip.\n\n"
    "## Sports equipment\nSurfboards and canoes are not allowed on the express boat.",
)
FARES = (
    "Fares",
    "## Express boat\n| Ticket | Price |\n|---|---|\n| Adult single | €9 |\n| Child single | €4.50 |\n\n"
    "## Slow ferry\n| Ticket | Price |\n|---|---|\n| Adult single | €6 |\n| Child single | €3 |",
)


def check(question: str, *, answer: Unit | None = None):
    return turn_check(
        conversation=[question],
        instructions=[],
        sources=[LUGGAGE, FARES],
        question=question,
        language="zh" if any("\u4e00" <= c <= "\u9fff" for c in question) else "en",
        encode=None,
        sentence_support=None,
        answer=answer,
        asked=question,
    )


def unit(text_part: str) -> Unit:
    return next(u for u in units_of([LUGGAGE, FARES]) if text_part in u.text)


def test_yes_no_questions_in_english_and_chinese():
    assert is_yes_no_question("can i bring my canoe on the express boat")
    assert is_yes_no_question("Hi! Is the office open on Sunday?")
    assert is_yes_no_question("and do kids pay?")
    assert is_yes_no_question("快船能带皮划艇吗")
    assert is_yes_no_question("周日开不开门")
    assert not is_yes_no_question("how much is a bike ticket")
    assert not is_yes_no_question("什么时候开门")


def test_negations_but_not_numbers_or_words_that_only_look_like_one():
    assert negates("Surfboards are not allowed.")
    assert negates("You can't bring it.")
    assert negates("周日不开放")
    assert not negates("Take bus No. 5 to the terminal.")
    assert not negates("两种票价不同")  # "different", not a negation
    assert not negates("Yes, bicycles travel for €3.")


def test_a_yes_where_the_answering_sentence_says_no_is_refused():
    canoes = unit("canoes")
    question = "can i bring my canoe on the express boat"
    findings = check(question, answer=canoes).findings(
        "Yes, you can bring your canoe on the express boat for €3."
    )
    assert "answers_no" in [f.problem for f in findings]
    assert "not allowed" in next(f for f in findings if f.problem == "answers_no").detail


def test_the_no_the_source_gives_passes_and_so_does_a_no_in_chinese():
    canoes = unit("canoes")
    assert (
        check("can i bring my canoe on the express boat", answer=canoes).findings(
            "No, canoes are not allowed on the express boat."
        )
        == []
    )
    assert not answers_no("快船能带皮划艇吗", "不可以，快船不允许携带皮划艇。", canoes)
    assert answers_no("快船能带皮划艇吗", "可以，快船可以携带皮划艇。", canoes)


def test_a_question_that_is_not_yes_or_no_is_not_read_for_a_no():
    canoes = unit("canoes")
    assert not answers_no("what can I bring on the express boat", "Bicycles, for €3 per trip.", canoes)


def test_one_boats_fare_given_when_the_customer_named_no_boat_is_ambiguous():
    findings = check("how much is an adult single?").findings("An adult single costs €9.")
    assert [f.problem for f in findings] == ["ambiguous"]
    assert findings[0].written == ("Express boat", "Slow ferry")


def test_the_fare_of_the_boat_the_customer_named_passes():
    assert check("how much is an adult single on the slow ferry?").findings("An adult single costs €6.") == []


def test_a_reply_that_gives_both_boats_fares_passes():
    reply = "An adult single costs €9 on the express boat and €6 on the slow ferry."
    assert check("how much is an adult single?").findings(reply) == []


def test_rows_of_one_table_are_told_apart_by_their_first_cell():
    adult, child = unit("Adult single; Price: €9"), unit("Child single; Price: €4.50")
    assert choices(adult, [child]) == ["Adult single", "Child single"]


def test_the_clarifying_question_in_both_languages():
    assert clarifying_question(["Express boat", "Slow ferry"], "en") == (
        "To give you the right answer: do you mean Express boat or Slow ferry?"
    )
    assert clarifying_question(["快船", "慢船"], "zh") == "为了给您准确的答复，请问您指的是快船还是慢船？"


def test_an_offer_of_a_person_to_a_yes_no_question_is_not_read_as_a_yes():
    canoes = unit("canoes")
    offer = "Would you like me to connect you with a colleague?"
    assert check("can i bring my canoe on the express boat", answer=canoes).findings(offer) == []


def test_two_faq_answers_are_two_topics_not_options_to_ask_about():
    faqs = units_of(
        [
            ("How much is the IELTS course?", "The IELTS course costs ¥7,800."),
            ("What do I need for the IELTS course?", "You need IELTS 5.0 or level B1."),
        ]
    )
    assert choices(faqs[0], [faqs[1]]) == []


def test_a_price_and_a_count_of_two_places_are_not_two_answers_to_one_question():
    sources = [
        ("Express boat", "Adult single tickets on the express boat cost €9."),
        ("Slow ferry", "Adult single tickets on the slow ferry allow 2 bags."),
        LUGGAGE,
    ]
    check = turn_check(
        conversation=["how much is an adult single ticket?"],
        instructions=[],
        sources=sources,
        question="how much is an adult single ticket?",
        language="en",
        encode=None,
        sentence_support=None,
    )
    assert check.findings("An adult single ticket costs €9.") == []


def test_a_customer_who_named_one_of_the_options_is_not_asked_which():
    assert named_one(
        ["Hangzhou Campus", "Ningbo Learning Centre"], "whats the address of the school in hangzhou"
    )
    assert not named_one(["Hangzhou Campus", "Ningbo Learning Centre"], "whats the address of the school")
    assert named_one(["快船", "慢船"], "快船单程多少钱")


def test_a_tool_result_is_not_an_option_to_offer():
    question = "how much is an adult single?"
    check = turn_check(
        conversation=[question],
        instructions=[],
        sources=[FARES, LUGGAGE],
        tool_results=[("faq_lookup", "Adult single tickets are €6 on the slow ferry.")],
        question=question,
        language="en",
        encode=None,
        sentence_support=None,
    )
    findings = check.findings("An adult single costs €9.")
    assert [f.written for f in findings] == [("Express boat", "Slow ferry")]


CARDS = (
    "Multi-trip cards",
    "| Card | Adult | Senior (65+) | Child (4-11) |\n|---|---|---|---|\n"
    "| Ten-trip card | €60.00 | €42.00 | €30.00 |\n| Day card | €12.00 | €8.00 | €6.00 |",
)


def cards_check(question: str):
    return turn_check(
        conversation=[question],
        instructions=[],
        sources=[CARDS, LUGGAGE],
        question=question,
        language="en",
        encode=None,
        sentence_support=None,
    )


def test_the_adult_column_given_for_a_senior_is_refused_and_names_the_senior_cell():
    findings = cards_check("how much is a ten trip card for seniors").findings(
        "A ten-trip card costs €60.00."
    )
    assert [f.problem for f in findings] == ["wrong_context"]
    assert "'Senior (65+): €42.00'" in findings[0].detail


def test_the_column_asked_for_passes_and_so_does_a_row_when_no_column_is_named():
    assert cards_check("how much is a ten trip card for seniors").findings("It costs €42.00.") == []
    assert cards_check("how much is a ten trip card").findings("A ten-trip card costs €60.00.") == []


def test_a_yes_or_no_about_something_no_source_mentions_is_refused():
    # Nothing in the sources says anything about student discounts: "no" is as invented as "yes" would be.
    question = "Do you give student discounts on the express boat?"
    for said in (
        "No, we do not give student discounts on the express boat.",
        "Yes, students get a discount.",
    ):
        [finding] = check(question).findings(said)
        assert finding.problem == "unknown_topic"
        assert "student" in finding.written
    # What the sources do talk about is not refused this way (the canoe's "no" has its own check).
    assert (
        check("Can I bring my bicycle on the express boat?").findings("Yes, you can bring your bicycle.")
        == []
    )


def test_the_topic_check_reads_only_yes_or_no_questions_and_words_not_pairs():
    assert unsourced_topic("how much is a student ticket", "A student ticket is cheaper.", frozenset()) == ()
    assert unsourced_topic("有学生优惠吗", "没有学生优惠。", frozenset(tokens("学生优惠"))) == ()
    assert unsourced_topic("do you give student discounts?", "Would you like a person?", frozenset()) == ()
    assert unsourced_topic(
        "do you give student discounts?", "No, we don't give student discounts.", frozenset({"student"})
    ) == ("discount",)


def test_a_word_the_assistants_knowledge_mentions_elsewhere_is_not_refused():
    # "open" is not in this turn's sources, but the help centre has it (retrieval counted it): the answer may
    # rest on what the sources say in other words ("closed on Mondays").
    question = "is the ticket office open on mondays?"
    said = "No, the ticket office is not open on Mondays."
    on_its_own = turn_check(
        conversation=[question],
        instructions=[],
        sources=[("Ticket office", "The ticket office is closed on Mondays.")],
        question=question,
        language="en",
        encode=None,
        sentence_support=None,
        asked=question,
    )
    assert [f.written for f in on_its_own.findings(said)] == [("open",)]
    with_knowledge = turn_check(
        conversation=[question],
        instructions=[],
        sources=[("Ticket office", "The ticket office is closed on Mondays.")],
        question=question,
        language="en",
        encode=None,
        sentence_support=None,
        asked=question,
        known=["open", "ticket", "office"],
    )
    assert with_knowledge.findings(said) == []


def test_a_chinese_yes_or_no_about_something_no_source_mentions_is_refused():
    # "转给" (pass on to) is in no source: whether points can be given to family is nobody's word.
    known = frozenset(tokens("潮汐卡 积分 家人 会员"))
    assert unsourced_topic("潮汐卡积分可以转给家人用吗", "潮汐卡积分可以转给家人用。", known) == ("转给",)
    # Character pairs that span two words ("生办", "办潮") are not words: only "额外" is unknown here.
    known = frozenset(tokens("学生 潮汐卡 折扣"))
    assert unsourced_topic("学生办潮汐卡有没有额外的折扣", "学生办潮汐卡没有额外的折扣。", known) == ("额外",)
    # Every word known: nothing to refuse.
    assert unsourced_topic("周日开门吗", "周日不开门。", frozenset(tokens("周日 开门"))) == ()


def test_chinese_words_are_not_read_against_english_sources():
    # An English help centre's answer to a Chinese question shares none of its words: that says nothing about
    # whether a source holds the answer ("Paya Lebar 服务点星期天是关闭的" from "closed on Sundays").
    findings = check("快船可以带自行车吗").findings("可以，快船可以带自行车。")
    assert "unknown_topic" not in [f.problem for f in findings]


def test_the_customers_own_situation_is_not_the_topic():
    # The README demo's first question: "bought", "last", "week" are in no source and are not what is asked.
    said = "Yes, you can return an item you bought last week within 30 days."
    assert (
        unsourced_topic("Can I return an item I bought last week?", said, frozenset({"return", "item"})) == ()
    )
