"""How the knowledge benchmark scores a reply: the figures are only as honest as these rules."""

from __future__ import annotations

from bench.knowledge.dataset import Question
from bench.knowledge.scoring import declines, facts_present, invented_specifics
from captain.runtime.knowledge import Evidence


def q(kind: str, facts=(), forbidden=(), text: str = "?") -> Question:
    return Question(
        id="x", lang="en", kind=kind, question=text, facts=[list(f) for f in facts], forbidden=list(forbidden)
    )


def test_every_fact_group_must_be_present_in_one_of_its_spellings():
    question = q("faq", facts=[["49.90", "49,90"], ["€", "EUR", "euro"]])
    assert facts_present("It is 49.90 EUR a month.", question)
    assert facts_present("每月 49,90 €", question)
    assert not facts_present("It is 49.90 a month.", question)  # the currency is missing
    assert facts_present("押金为299元", q("document", facts=[["299 元", "299元"]]))  # spaces ignored for CJK


def test_an_invented_specific_on_an_unanswerable_question_is_counted():
    corpus = Evidence.of(["The Monthly plan costs €49.90.", "Write to help@volta.example."])
    question = q("unanswerable", forbidden=["scooter rental"], text="Do you rent scooters for 2 people?")
    assert invented_specifics("Sorry, I don't know.", question, corpus) == []
    assert (
        invented_specifics("Yes, for 2 people it is €49.90.", question, corpus) == []
    )  # from the corpus / question
    assert invented_specifics("Yes, scooter rental costs $15 per hour.", question, corpus) == [
        "15",
        "$",
        "scooter rental",
    ]


def test_a_decline_is_recognised_in_both_languages():
    assert declines("I'm sorry, I don't have information about that. Would you like me to connect you?")
    assert declines("抱歉，我只能回答与Volta相关的问题。")
    assert not declines("France won the 2018 World Cup.")


def test_a_question_back_is_counted_apart_and_is_neither_right_nor_wrong():
    from bench.knowledge.harness import Answer
    from bench.knowledge.trust import trust_figures
    from captain.runtime.knowledge.conflicts import clarifying_question

    question = q("faq", facts=[["€9"]], text="How much is an adult single?")
    asked_back = clarifying_question(["Express boat", "Slow ferry"], "en")
    answers = [
        Answer(question, "inject+check", "reply", asked_back, 2.0, 1, 500, False),
        Answer(question, "inject+check", "reply", "An adult single costs €9.", 4.0, 3, 700, True),
    ]
    figures = trust_figures(answers, Evidence.of(["Adult single €9", "Adult single €6"]))
    assert figures["clarifying_questions"] == 1
    assert figures["correct_answerable"] == "50% (1/2)"
    assert figures["wrong_replies"] == "0% (0/2)"
    assert figures["model_calls_mean"] == 2.0


def test_a_reply_with_some_of_the_expected_values_and_no_other_is_partial_not_wrong():
    from bench.knowledge.harness import Answer
    from bench.knowledge.trust import partial_reply, trust_figures, wrong_value

    question = q("document", facts=[["200 cups"], ["3 months"]], text="how often do i need to descale")
    corpus = Evidence.of(["Descale every 3 months or every 200 cups, whichever comes first."])
    partial = Answer(question, "inject+check", "reply", "Descale it every 3 months.", 3.0, 1, 500, True)
    wrong = Answer(question, "inject+check", "reply", "Descale it every 6 months.", 3.0, 1, 500, True)
    mixed = Answer(
        question, "inject+check", "reply", "Every 3 months, or 6 if you use it less.", 3.0, 1, 500, True
    )
    assert partial_reply(partial) and not wrong_value(partial, corpus)
    assert wrong_value(wrong, corpus) and not partial_reply(wrong)
    assert wrong_value(mixed, corpus) and not partial_reply(mixed)
    figures = trust_figures([partial, wrong, mixed], corpus)
    assert figures["wrong_replies"] == "67% (2/3)"
    assert figures["partial_replies"] == "33% (1/3)"
