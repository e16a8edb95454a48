"""A reply that states things but not the kind of value asked for (a price, a duration, a time of day) does not
answer, however true each of its sentences is: the small model's neighbouring sentence of the right document."""

from __future__ import annotations

import numpy as np
import pytest

from captain.runtime.knowledge.asked import asked_kinds
from captain.runtime.knowledge.claims import turn_check
from captain.runtime.knowledge.evidence import Scored, clear_answer, select_evidence
from captain.runtime.knowledge.sources import Source
from captain.runtime.knowledge.units import units_of

WARD = (
    "Hospital stays",
    "## Visiting\nVisiting hours for pets staying in the hospital are 14:00 to 19:00 every day.\n"
    "A visit lasts up to 20 minutes so the pets can rest.",
)
COLLECTION = (
    "还车",
    "## 上门收车\n可以预约上门收车，每次收费 20 元。\n\n"
    "## 逾期\n逾期超过 24 小时且联系不上租客的，按车辆丢失处理。",
)
SUPPORT = (
    "Contact",
    "## E-mail\nWe answer e-mails within 1 working day.\n\n## Phone\nCall +65 6018 2200, Monday to Saturday.",
)


def findings(question: str, reply: str, *, language: str = "en") -> list[str]:
    check = turn_check(
        conversation=[question],
        instructions=[],
        sources=[WARD, COLLECTION, SUPPORT],
        question=question,
        language=language,
        encode=None,
        sentence_support=None,
        asked=question,
    )
    return [f.problem for f in check.findings(reply)]


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("how much is a 10 trip card for seniors", {"price"}),
        ("what's the delivery fee for my cat's medication?", {"price"}),
        ("不想去服务点还车，可以上门收车吗？多少钱", {"price"}),
        ("发邮件给客服一般多久回复", {"duration"}),
        ("how long does a refund take?", {"duration"}),
        ("what are the visiting hours if my cat has to stay in the hospital", {"clock"}),
        ("周六几点开门", {"clock"}),
        ("can I bring my dog?", set()),
        ("what does the fee cover?", set()),
        ("how much time do I need to book ahead", set()),
    ],
)
def test_the_kind_of_value_a_question_asks_for(question, kinds):
    assert asked_kinds(question) == kinds


def test_a_duration_given_for_the_visiting_hours_is_refused_and_the_hours_pass():
    question = "what are the visiting hours if my cat has to stay in the hospital"
    assert findings(question, "Your cat can have visits of up to 20 minutes.") == ["unanswered"]
    assert findings(question, "You may visit your cat for up to 20 minutes.") == ["unanswered"]
    assert findings(question, "Visiting hours are 14:00 to 19:00 every day.") == []


def test_a_neighbouring_rule_given_for_a_price_question_is_refused_in_chinese():
    question = "不想去服务点还车，可以上门收车吗？多少钱"
    wrong = "逾期超过 24 小时且联系不上租客的，按车辆丢失处理。"
    assert "unanswered" in findings(question, wrong, language="zh")
    assert findings(question, "可以预约上门收车，每次收费 20 元。", language="zh") == []


def test_phone_details_for_a_how_long_question_are_refused():
    question = "how long do you take to answer an e-mail?"
    assert "unanswered" in findings(question, "Call +65 6018 2200, Monday to Saturday.")
    assert findings(question, "We answer e-mails within 1 working day.") == []


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("how long will my refund take?", "Refunds reach your card within a week."),
        ("how long will my refund take?", "Refunds take 5-7 business days."),
        ("退款要多久", "一般三到五个工作日到账。"),
        ("what are your opening hours?", "We are open every day from 9 to 6."),
        ("when do you open on Sunday?", "We are closed on Sundays."),
        ("When do the Intensive terms start in 2026?", "They start on 12 January and 13 April."),
    ],
)
def test_answers_in_everyday_words_pass(question, reply):
    assert "unanswered" not in findings(question, reply, language="zh" if "退款" in question else "en")


def test_free_a_no_about_paying_or_an_offer_of_a_person_answers():
    assert "unanswered" not in findings("is there a fee for a visit?", "Visits are free of charge.")
    assert "unanswered" not in findings("上门收车要加钱吗", "不需要另外付费。", language="zh")
    assert findings("how much is collection?", "I'm not sure, let me connect you with a colleague.") == []


def test_the_evidence_sentence_is_not_sent_as_the_answer_when_it_gives_no_value_of_the_kind():
    units = units_of([WARD])
    minutes = next(u for u in units if "20 minutes" in u.text)
    hours = next(u for u in units if "14:00" in u.text)
    question = "what are the visiting hours if my cat has to stay in the hospital"
    assert clear_answer([Scored(minutes, 0.9, 1)], language="en", question=question) is None
    assert clear_answer([Scored(hours, 0.9, 1)], language="en", question=question) == hours


def test_a_sentence_giving_the_kind_asked_for_comes_first_in_the_evidence_over_a_closer_neighbour():
    """The encoder puts the visit's length (a duration) closer to "what time can I come" than the hours; the
    question asks for a time of day, so the sentence that gives one goes first."""

    def encode(texts: list[str]) -> np.ndarray:
        # A stand-in for the sentence encoder with the cosines the real one gives such pairs: the question and
        # the neighbour close, the answer a little further.
        closeness = {"20 minutes": 0.8, "14:00": 0.7}
        rows = []
        for text in texts:
            cosine = next((c for key, c in closeness.items() if key in text), 1.0)
            rows.append([cosine, float(np.sqrt(1 - cosine**2))])
        return np.array(rows)

    source = Source(ref="doc:1", kind="document", title=WARD[0], text=WARD[1], score=0.7)
    question = "what time can I come"
    best = select_evidence([source], query=question, context="", encode=encode, limit=2)
    assert "14:00" in best[0].unit.text
    assert "20 minutes" in best[1].unit.text
    # Asked how long a visit lasts, the duration stays first: the order follows what is asked.
    asked_length = select_evidence([source], query="how long can a visit last", context="", encode=encode)
    assert "20 minutes" in asked_length[0].unit.text


def test_among_sentences_under_one_heading_the_one_whose_own_words_answer_comes_first():
    """The sentences of one FAQ answer share its question as their heading: with the heading, the encoder finds
    them all equally close; what each sentence itself says tells the answer from its neighbours."""
    faq = Source(
        ref="faq:1",
        kind="faq",
        title="Is the placement test free? How long does it take?",
        text="You receive your level by e-mail within 2 working days. The written part takes 40 minutes.",
        score=0.7,
    )

    def encode(texts: list[str]) -> np.ndarray:
        # With the heading every sentence is as close as the next; on its own the 40 minutes is the closest.
        def cosine(text: str) -> float:
            if text == question:
                return 1.0
            if text.startswith(faq.title):
                return 0.7
            return 0.9 if "40 minutes" in text else 0.3

        return np.array([[c, float(np.sqrt(1 - c**2))] for c in map(cosine, texts)])

    question = "how long is the test"
    best = select_evidence([faq], query=question, context="", encode=encode, limit=2)
    assert "40 minutes" in best[0].unit.text


def test_a_sentence_in_the_other_language_is_not_ranked_below_every_neighbour_for_sharing_no_words():
    """A Chinese question whose answer is only in an English document: the English sentence shares none of the
    question's words, so it is scored for them as an average sentence in the question's language."""
    english = Source(
        ref="chunk:1",
        kind="document",
        title="Lockers",
        text="A locker key deposit of ¥100 is refunded when you return the key.",
        score=0.6,
    )
    chinese = Source(
        ref="chunk:2",
        kind="document",
        title="校园",
        text="储物柜在二楼。图书馆周末开放。",
        score=0.6,
    )
    question = "储物柜要押金吗"

    def encode(texts: list[str]) -> np.ndarray:
        # The multilingual encoder finds the English deposit sentence closest to the question.
        def cosine(text: str) -> float:
            return 1.0 if text == question else 0.9 if "deposit" in text else 0.6 if "储物柜" in text else 0.3

        return np.array([[c, float(np.sqrt(1 - c**2))] for c in map(cosine, texts)])

    best = select_evidence([english, chinese], query=question, context="", encode=encode, limit=3)
    assert "deposit" in best[0].unit.text
