"""Hybrid search over an assistant's knowledge: scoping, approval, the keyword side, and index freshness."""

from __future__ import annotations

import pytest

from captain.knowledge.models import FaqEntry
from captain.knowledge.services.knowledge_search import (
    AssistantKnowledge,
    _chunk_keyword_ranking,
    has_knowledge,
    knowledge_cache_clear,
)
from tests.factories import AssistantFactory, FaqEntryFactory

from .knowledge_rows import document

pytestmark = [pytest.mark.django_db]


@pytest.fixture(autouse=True)
def _fresh_cache():
    knowledge_cache_clear()
    yield
    knowledge_cache_clear()


def search(assistant, query: str, **kwargs):
    return AssistantKnowledge(assistant_id=assistant.id, account_id=assistant.account_id).retrieve(
        query, **kwargs
    )


def test_another_accounts_knowledge_is_never_retrieved():
    ours, theirs = AssistantFactory(), AssistantFactory()
    FaqEntryFactory(assistant=theirs, question="What is the Wi-Fi password?", answer="It is volta-2024.")
    document(theirs, "Secrets", [("Wi-Fi", "The Wi-Fi password in every station is volta-2024.")])
    FaqEntryFactory(assistant=ours, question="Where can I park?", answer="Park at any station.")
    assert [s.ref for s in search(ours, "what is the wifi password").sources] == []
    # Even asking with their assistant's id but our account finds nothing: every query is scoped to both.
    crossed = AssistantKnowledge(assistant_id=theirs.id, account_id=ours.account_id)
    assert crossed.retrieve("what is the wifi password").sources == ()
    assert search(theirs, "what is the wifi password").found


def test_only_approved_enabled_entries_and_the_assistants_own_chunks_are_found():
    assistant = AssistantFactory()
    assert not has_knowledge(assistant)
    FaqEntryFactory(
        assistant=assistant, question="Can I bring my dog?", answer="Dogs ride free.", status="pending"
    )
    assert not has_knowledge(assistant)
    assert not search(assistant, "can I bring my dog").found
    entry = FaqEntry.objects.get()
    entry.status = FaqEntry.Status.APPROVED
    entry.save()
    # The index notices the approval without a restart (the version read with each query changed).
    assert [s.text for s in search(assistant, "can I bring my dog").sources] == ["Dogs ride free."]
    entry.enabled = False
    entry.save()
    assert not search(assistant, "can I bring my dog").found


def test_chinese_and_english_questions_find_passages_in_the_other_language():
    assistant = AssistantFactory()
    document(assistant, "押金", [("押金退还", "押金为 299 元，归还车辆后 7 个工作日内退还到原支付账户。")])
    document(assistant, "Batteries", [("Charging", "A full battery charge takes 4 hours at any station.")])
    assert "299" in search(assistant, "押金多久退回？").sources[0].text
    assert "4 hours" in search(assistant, "电池充满电要多久？").sources[0].text
    assert "4 hours" in search(assistant, "how long does charging a battery take?").sources[0].text


def test_the_keyword_side_uses_the_full_text_index():
    assistant, other = AssistantFactory(), AssistantFactory()
    doc = document(assistant, "Models", [("Fleet", "The Volta X7 has a 70 km range."), ("Other", "Helmets.")])
    document(other, "Models", [("Fleet", "The Volta X7 is sold out.")])
    ids = _chunk_keyword_ranking(assistant.id, assistant.account_id, ["x7", "range"])
    assert ids == [doc.chunks.get(heading="Fleet").id]
    # Deleting the document removes its chunks from the full-text index too (triggers).
    doc.delete()
    assert _chunk_keyword_ranking(assistant.id, assistant.account_id, ["x7"]) == []


def test_an_unrelated_question_finds_nothing_above_the_threshold():
    assistant = AssistantFactory()
    FaqEntryFactory(assistant=assistant, question="How much is the Monthly plan?", answer="€49.90 per month.")
    document(assistant, "Stations", [("Hours", "Stations are open 9:00-18:00.")])
    result = search(assistant, "who won the football world cup in 2018?")
    assert not result.found
    assert 0 < result.best_score < 0.35
    assert result.candidates  # what was close, for the debug log
