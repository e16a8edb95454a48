"""The sentence-by-sentence grounding check, without a model: each value a reply states must come from a source
sentence about what the customer asked, and the reply must be in the customer's language."""

from __future__ import annotations

from captain.runtime.knowledge.claims import is_claim, turn_check
from captain.runtime.knowledge.units import units_of
from captain.runtime.promises import said_transfer

FEES = (
    "Fees > Lockers and parking",
    "## Lockers\n"
    "| Item | Fee |\n|---|---|\n| Small locker | €4 per day |\n| Large locker | €8 per day |\n\n"
    "## Parking\nParking at the Norrhaven terminal costs €12 per day.",
)
HOURS = (
    "Opening hours",
    "## Regular hours\nThe ticket office is open 8:00-20:00 every day.\n\n"
    "## Winter\nFrom November to March the ticket office is open 9:00-17:00.",
)


def check(question: str, *, language: str = "en", conversation: tuple[str, ...] = (), encode=None):
    return turn_check(
        conversation=[question, *conversation],
        instructions=[],
        sources=[FEES, HOURS],
        question=question,
        language=language,
        encode=encode,
        sentence_support=None,
    )


def test_units_keep_the_table_header_and_the_headings():
    units = units_of([FEES])
    assert units[0].text == "Item: Large locker; Fee: €8 per day" or units[1].text == (
        "Item: Large locker; Fee: €8 per day"
    )
    large = next(u for u in units if "Large" in u.text)
    assert large.context == "Fees > Lockers and parking > Lockers"
    parking = next(u for u in units if "Parking" in u.text)
    assert parking.context.endswith("> Parking")


def test_the_right_value_for_the_item_asked_passes():
    assert check("how much is a large locker per day?").findings("A large locker costs €8 per day.") == []


def test_a_value_from_the_neighbouring_table_row_is_refused():
    findings = check("how much is a large locker per day?").findings("A large locker costs €4 per day.")
    assert [f.problem for f in findings] == ["wrong_context"]
    assert findings[0].written == ("4",)
    assert "Large locker" in findings[0].detail


def test_the_regular_hours_given_for_a_winter_question_are_refused():
    findings = check("when is the ticket office open in winter?").findings(
        "The ticket office is open 8:00-20:00."
    )
    assert [f.problem for f in findings] == ["wrong_context"]
    assert (
        check("when is the ticket office open in winter?").findings(
            "In winter the ticket office is open 9:00-17:00."
        )
        == []
    )


def test_a_number_in_no_source_is_refused_and_the_customers_own_number_is_not():
    findings = check("what is the parking fee?").findings("Parking costs €15 per day.")
    assert [(f.problem, f.written) for f in findings] == [("not_in_sources", ("15",))]
    assert (
        check("my booking is 88412, how much is parking?").findings(
            "For booking 88412, parking at the Norrhaven terminal costs €12 per day."
        )
        == []
    )


def test_a_tool_result_is_a_source_and_an_invented_order_number_is_refused():
    def tool_check():
        return turn_check(
            conversation=["where is my order?"],
            instructions=[],
            sources=[],
            tool_results=[("order_lookup", '{"order": "A-5531", "status": "shipped", "eta": "2026-12-02"}')],
            question="where is my order?",
            language="en",
            encode=None,
            sentence_support=None,
        )

    assert tool_check().findings("Order A-5531 has shipped and arrives on 2026-12-02.") == []
    findings = tool_check().findings("Order A-7720 has shipped.")
    assert [(f.problem, f.written) for f in findings] == [("not_in_sources", ("7720",))]


def test_a_reply_in_another_language_than_the_customers_is_refused():
    findings = check("大储物柜一天多少钱？", language="zh").findings("A large locker costs €8 per day.")
    assert [f.problem for f in findings] == ["language"]
    assert check("大储物柜一天多少钱？", language="zh").findings("大储物柜每天8欧元（€8）。") == []


def test_courtesy_and_questions_back_are_not_claims():
    assert not is_claim("Would you like me to connect you with a colleague?")
    assert not is_claim("Thanks for reaching out!")
    assert not is_claim("如有其他问题，请随时联系我们。")
    assert is_claim("The ferry to Sellport leaves from pier three.")


def test_a_promised_transfer_is_told_from_an_offer():
    assert said_transfer("I'll transfer you to our billing team now.")
    assert said_transfer("我这就为您转接人工客服。")
    assert not said_transfer("Would you like me to connect you with a member of our team?")
    assert not said_transfer("需要为您转接人工客服吗？")
    assert not said_transfer("Parking costs €12 per day.")


def test_a_reply_that_hands_the_question_back_is_refused():
    findings = check("储物柜要押金吗？多少钱", language="zh").findings("储物柜要押金吗？多少钱？")
    assert [f.problem for f in findings] == ["echo"]


def test_a_value_for_a_named_thing_no_source_mentions_is_refused():
    findings = check("how much is the wuzhen day trip?").findings("The Wuzhen Day Trip costs €12 per day.")
    assert [(f.problem, f.written) for f in findings] == [("unknown_topic", ("wuzhen", "trip"))]


def test_a_value_from_a_sentence_about_nothing_asked_is_refused():
    from captain.knowledge.services.retrieval import get_encoder

    # No word of the question is in the sources: the bundled encoder judges the parking sentence not about it.
    findings = check("how much is the sunset cruise?", encode=get_encoder().encode).findings(
        "It costs €12 per day."
    )
    assert [f.problem for f in findings] == ["wrong_context"]


def test_the_whole_question_sent_back_without_its_question_mark_is_an_echo():
    findings = check("一月一号早上储物柜几点开始有", language="zh").findings("1月一号早上储物柜几点开始有")
    assert [f.problem for f in findings] == ["echo"]
    # Part of the question in a statement is an answer that repeats its words, not an echo.
    assert check("is the large locker €8 per day").findings("The large locker is €8 per day.") == []


def test_a_greeting_back_is_not_an_echo():
    assert check("hello there").findings("Hello!") == []


def test_a_heading_closes_its_sibling_when_the_document_has_no_title_heading():
    units = units_of([("Fares", "## Express boat\nAdults pay €9.\n\n## Slow ferry\nAdults pay €6.")])
    assert [u.context for u in units] == ["Fares > Express boat", "Fares > Slow ferry"]


def test_a_title_that_is_also_the_first_heading_is_said_once():
    units = units_of([("Fares", "# Fares\n## Express boat\nAdults pay €9.")])
    assert units[0].context == "Fares > Express boat"


def test_a_quoted_password_no_source_writes_is_refused():
    findings = check("whats the wifi password at the terminal").findings(
        'The wifi password at the terminal is "Tidewater-2024".'
    )
    assert [f.problem for f in findings] == ["not_in_sources"]
    assert "Tidewater-2024" in findings[0].detail


def test_a_quoted_name_the_sources_write_passes():
    assert check("where do i leave big bags").findings('Ask for a "Large locker" at the terminal.') == []
    # The customer's own words may be quoted back.
    assert check('what is a "day pass"?').findings('We have no "day pass".') == []


GROOMING = (
    "Grooming",
    "# Grooming\n\nA dog wash with drying and brushing costs ¥120 for small dogs and ¥180 for large dogs.",
)
# The found passage that names the certificate states no price: no other value competes with the wash's.
TRAVEL = (
    "Travel",
    "# Travel papers\n\nOnly the Jing'an clinic issues the export health certificate for a dog.",
)
GROOMING_ZH = ("美容", "# 美容\n\n狗狗洗澡含吹干：小型犬120元，大型犬180元。")
TRAVEL_ZH = ("出境", "# 出境手续\n\n狗狗出境健康证明只在静安店办理。")
# How many of a help centre's 60 passages hold each word: "dog" is everywhere, "certificate" in two.
COUNTS = {
    "dog": 30,
    "wash": 3,
    "certificate": 2,
    "health": 9,
    "export": 1,
    "狗狗": 20,
    "证明": 2,
    "出境": 2,
    "洗澡": 3,
}


def named_check(question: str, sources: list[tuple[str, str]], language: str = "en"):
    return turn_check(
        conversation=[question],
        instructions=[],
        sources=sources,
        question=question,
        language=language,
        encode=None,
        sentence_support=None,
        term_passages=COUNTS,
        passages=60,
    )


def test_a_value_from_a_sentence_sharing_only_a_common_word_with_the_question_is_refused():
    # The wash sentence shares "dog" with the question, which half the help centre says; the thing named, the
    # certificate, is in another found sentence: the wash price is not the certificate's.
    question = "how much is the certificate for my dog?"
    wrong = named_check(question, [GROOMING, TRAVEL]).findings("It costs ¥120 for a small dog.")
    assert [f.problem for f in wrong] == ["wrong_context"]
    # A sentence stating no value is not a wrong value (it gives no price either: `asked` refuses that).
    no_value = named_check(question, [GROOMING, TRAVEL]).findings("Only the Jing'an clinic issues it.")
    assert [f.problem for f in no_value] == ["unanswered"]
    # The wash asked about by name still gets its price.
    assert named_check("how much is a wash for my dog?", [GROOMING, TRAVEL]).findings("It costs ¥120.") == []


def test_a_chinese_value_sharing_only_a_common_word_is_refused_by_the_word_named():
    question = "狗狗出境的证明多少钱"
    wrong = named_check(question, [GROOMING_ZH, TRAVEL_ZH], "zh").findings("小型犬120元。")
    assert [f.problem for f in wrong] == ["wrong_context"]
    assert named_check("狗狗洗澡多少钱", [GROOMING_ZH, TRAVEL_ZH], "zh").findings("小型犬120元。") == []


def test_without_the_help_centres_counts_a_common_word_still_carries_the_value():
    # Without the counts no word is known to be rare in the whole help centre: "dog", which both found
    # passages hold, ties the wash price to the question, as before the counts existed.
    question = "how much is the certificate for my dog?"
    without = turn_check(
        conversation=[question],
        instructions=[],
        sources=[GROOMING, TRAVEL],
        question=question,
        language="en",
        encode=None,
        sentence_support=None,
    )
    assert without.named == frozenset()
    assert without.findings("It costs ¥120 for a small dog.") == []
