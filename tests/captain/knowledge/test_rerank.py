"""The rerank of hybrid search's fused candidates (captain/knowledge/services/rerank.py): with the real bundled
encoder, the passage that states the detail asked about comes first, a document-only fact keeps its slot next to
close FAQ pairs, and a question finds the passage written in the other language."""

from __future__ import annotations

import pytest
from django.test import override_settings

from captain.knowledge.services.knowledge_search import AssistantKnowledge, knowledge_cache_clear
from captain.knowledge.services.rerank import (
    RerankSettings,
    TermStats,
    coverage,
    is_cjk,
    query_terms,
    rerank,
)
from captain.runtime.knowledge import Source, tokens
from tests.captain.answering.knowledge_rows import document
from tests.factories import AssistantFactory, FaqEntryFactory

LONG_FEES_PASSAGE = (
    "Our school runs group courses in the morning and in the afternoon, with at most eight students per class. "
    "Teachers hold a national teaching certificate and follow the same textbook series at every level. "
    "Classes start every month and a new student can join after the placement test. "
    "The online group course costs 2,400 yuan per 8-week term, paid before the first lesson. "
    "Course materials are sent as PDF files before the first class."
)


@pytest.fixture(autouse=True)
def _fresh_cache():
    knowledge_cache_clear()
    yield
    knowledge_cache_clear()


def search(assistant, query: str, **kwargs):
    return AssistantKnowledge(assistant_id=assistant.id, account_id=assistant.account_id).retrieve(
        query, **kwargs
    )


def faq(ref: str, question: str, answer: str) -> Source:
    return Source(kind="faq", ref=ref, title=question, text=answer)


def test_coverage_weighs_the_rare_terms_of_the_query():
    sources = [
        Source("document", "chunk:1", "Fees", "The online group course costs 2,400 yuan."),
        Source("document", "chunk:2", "Fees", "The intensive course costs 16,800 yuan."),
        Source("document", "chunk:3", "Courses", "Every course has a placement test."),
    ]
    stats = TermStats.of(tokens(f"{s.title}\n{s.text}") for s in sources)
    terms = query_terms("how much is the online course")
    # "online" is in one passage only, "course" in all three: it is what tells them apart.
    assert coverage(terms, sources[0], stats) > coverage(terms, sources[1], stats) > 0
    # A term no passage holds cannot tell them apart and is left out.
    assert coverage(query_terms("online zebra"), sources[0], stats) == 1.0


def test_script_detection_reads_the_text_not_a_quoted_name():
    assert is_cjk("押金为 299 元，归还车辆后 7 个工作日内退还。")
    assert is_cjk("雅思备考班 IELTS preparation 课程概况")
    assert not is_cjk("Our Hangzhou campus (杭州校区) opens at 8:00 every weekday.")


def test_faq_pairs_yield_to_an_equally_close_document_passage_that_holds_the_terms():
    sources = [
        faq("faq:1", "How much does the intensive course cost?", "16,800 yuan per term."),
        Source("document", "chunk:1", "Fees > Online", "The online group course costs 2,400 yuan per term."),
    ]
    stats = TermStats.of(tokens(f"{s.title}\n{s.text}") for s in sources)
    terms = query_terms("how much is the online group course")
    order = rerank(
        [0, 1], sources, [0.55, 0.45], "how much is the online group course", terms, stats, RerankSettings()
    )
    assert order == [1, 0]
    off = RerankSettings(enabled=False)
    assert rerank([0, 1], sources, [0.55, 0.45], "q", terms, stats, off) == [0, 1]


@pytest.mark.django_db
def test_a_long_passage_whose_one_sentence_answers_outranks_a_vaguely_similar_faq_pair():
    assistant = AssistantFactory()
    FaqEntryFactory(
        assistant=assistant,
        question="How much does a course cost?",
        answer="Prices depend on the course; see our courses page.",
    )
    document(assistant, "Courses and fees", [("Group courses", LONG_FEES_PASSAGE)])
    document(assistant, "Visa", [("Letters", "We send the admission letter within ten working days.")])
    found = search(assistant, "how much is the online group course")
    assert found.sources[0].kind == "document"
    assert "2,400 yuan" in found.sources[0].text
    # The order is the reranked one; each source still carries its cosine (the gate reads best_score).
    assert found.best_score == max(s.score for s in found.sources)


@pytest.mark.django_db
def test_a_document_only_fact_keeps_a_slot_when_two_faq_pairs_score_high():
    assistant = AssistantFactory()
    FaqEntryFactory(
        assistant=assistant,
        question="How long does a refund take?",
        answer="Refunds are paid back to the card you paid with.",
    )
    FaqEntryFactory(
        assistant=assistant,
        question="Can I get a refund if I cancel?",
        answer="Yes, before the course starts you get a full refund.",
    )
    FaqEntryFactory(
        assistant=assistant,
        question="What refund do I get after the course started?",
        answer="Half of the fee for the weeks not yet taught.",
    )
    document(
        assistant,
        "Refunds",
        [
            ("Processing times", "Bank transfer refunds take 10 to 15 working days to reach your account."),
            ("Transfers", "You may move your course to a later term once, free of charge."),
            ("Illness", "With a doctor's note, missed weeks can be taken in a later term."),
        ],
    )
    found = search(assistant, "how many working days does a bank transfer refund take?")
    # Three FAQ pairs about refunds are close to the question; the passage with the number still comes first
    # (FAQ pairs fill the other slots only because no other passage is relevant enough).
    assert "10 to 15 working days" in found.sources[0].text
    assert [s.kind for s in found.sources[1:]] == ["faq"] * (len(found.sources) - 1)


@pytest.mark.django_db
def test_a_chinese_question_finds_the_english_passage_and_the_reverse():
    assistant = AssistantFactory()
    document(
        assistant,
        "Campus guide",
        [
            ("Lockers", "Lockers on the second floor cost a deposit of 50 yuan, returned with the key."),
            ("Library", "The library is open from 9:00 to 18:00 on weekdays."),
        ],
    )
    document(assistant, "退款", [("退款时间", "退款在 10 个工作日内退回到原支付账户。")])
    FaqEntryFactory(assistant=assistant, question="Where is the campus?", answer="At 12 West Lake Road.")
    assert "library" in search(assistant, "图书馆几点开门？").sources[0].text.lower()
    assert "10 个工作日" in search(assistant, "how long does a refund take?").sources[0].text


@pytest.mark.django_db
def test_a_short_follow_up_is_searched_with_the_previous_turn():
    assistant = AssistantFactory()
    document(
        assistant,
        "Fees",
        [
            ("Adults", "Adult students pay a one-off registration fee of 300 yuan."),
            ("Kids", "Children's courses have no registration fee; the first trial lesson is free."),
        ],
    )
    document(assistant, "Visa", [("Letters", "We send the admission letter within ten working days.")])
    found = search(assistant, "and for kids?", context="do new students pay a registration fee?")
    assert "Children" in found.sources[0].text


@pytest.mark.django_db
def test_the_rerank_can_be_turned_off_in_settings():
    with override_settings(CAPTAIN={"KNOWLEDGE_RERANK": {"enabled": False}}):
        assert RerankSettings.from_settings() == RerankSettings(enabled=False)
    assert RerankSettings.from_settings().enabled
