"""FAQ drafts from documents and resolved conversations, with the assistant's model served over real HTTP by the
scripted server (tests/support/fake_llm_server.py) and the real encoder for dedup."""

from __future__ import annotations

import json

import pytest

from captain.knowledge.models import FaqEntry
from captain.knowledge.services import faq_drafts
from captain.knowledge.services.faq_drafts import (
    faq_draft_conversation_candidates,
    faq_draft_conversation_problem,
    faq_drafts_conversations_sweep,
    faq_drafts_from_conversation,
    faq_drafts_from_document,
)
from helpdesk.models import Conversation, Message
from tests.captain.answering.knowledge_rows import document
from tests.factories import (
    AssistantFactory,
    AssistantInboxFactory,
    ConversationFactory,
    FaqEntryFactory,
    MessageFactory,
)
from tests.support import fake_llm_server as fake

pytestmark = pytest.mark.django_db

SHIPPING = (
    "Shipping",
    "Orders within Germany arrive in 2 to 3 business days. Express delivery costs 9.90 euros.",
)
RETURNS = ("Returns", "Returns are free within 30 days. Write to returns@acme.example to start one.")


def pairs_json(*pairs: tuple[str, str]) -> str:
    return json.dumps([{"question": q, "answer": a} for q, a in pairs], ensure_ascii=False)


@pytest.fixture
def model(llm_settings, settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "FAQ_DRAFTS_CHUNKS_PER_CALL": 3}
    return llm_settings


@pytest.fixture
def redis_clean(redis_url):
    faq_drafts._redis.cache_clear()
    yield
    faq_drafts._redis.cache_clear()


def test_drafts_from_a_document_are_pending_with_their_source(model):
    assistant = AssistantFactory()
    doc = document(assistant, "Help centre", [SHIPPING, RETURNS])
    # A small model's habits: prose around the JSON, a fence, a broken item among good ones.
    model.push(
        fake.text(
            "Sure! Here are the FAQs:\n```json\n"
            + pairs_json(
                ("How long does delivery in Germany take?", "2 to 3 business days."),
                ("How much is express delivery?", "Express delivery costs 9.90 euros."),
            )[:-1]
            + ', {"question": 42}, {"answer": "no question"}]\n```\nHope this helps.'
        )
    )

    stored = faq_drafts_from_document(document_id=doc.pk)

    assert stored == 2
    prompt = json.dumps(model.requests[0]["messages"], ensure_ascii=False)
    assert SHIPPING[1] in prompt and RETURNS[1] in prompt
    entries = list(FaqEntry.objects.order_by("id"))
    assert [(e.question, e.status, e.source, e.source_document_id) for e in entries] == [
        ("How long does delivery in Germany take?", "pending", "document", doc.pk),
        ("How much is express delivery?", "pending", "document", doc.pk),
    ]
    assert {e.account_id for e in entries} == {assistant.account_id}


def test_a_pair_whose_numbers_or_addresses_are_not_in_the_chunk_is_dropped(model):
    doc = document(AssistantFactory(), "Help centre", [SHIPPING, RETURNS])
    model.push(
        fake.text(
            pairs_json(
                ("How much is express delivery?", "Express delivery costs 14.90 euros."),  # 14.90: invented
                ("How do I start a return?", "Write to support@acme.example."),  # wrong address
                ("How long do I have to return an item?", "30 days, free of charge."),
            )
        )
    )

    assert faq_drafts_from_document(document_id=doc.pk) == 1

    assert list(FaqEntry.objects.values_list("question", flat=True)) == [
        "How long do I have to return an item?"
    ]


@pytest.mark.parametrize(
    "answer",
    [
        fake.text("I am sorry, I cannot help with that."),
        fake.text('{"question": "unterminated'),
        fake.text("[1, 2, 3]"),
        fake.text(""),
        fake.invalid_json(),
    ],
    ids=["prose", "broken-json", "wrong-shape", "empty", "invalid-http-body"],
)
def test_a_garbage_answer_stores_nothing_and_does_not_raise(model, answer):
    doc = document(AssistantFactory(), "Help centre", [SHIPPING])
    model.push(answer)

    assert faq_drafts_from_document(document_id=doc.pk) == 0
    assert not FaqEntry.objects.exists()


def test_a_failed_call_midway_leaves_no_half_state(model, settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "FAQ_DRAFTS_CHUNKS_PER_CALL": 1}
    doc = document(AssistantFactory(), "Help centre", [SHIPPING, RETURNS])
    model.push(
        fake.text(pairs_json(("How long does delivery take?", "2 to 3 business days."))),
        fake.error(500),
    )

    assert faq_drafts_from_document(document_id=doc.pk) == 0

    assert len(model.requests) == 2
    assert not FaqEntry.objects.exists()


def test_calls_per_document_are_bounded(model, settings):
    settings.CAPTAIN = {
        **settings.CAPTAIN,
        "FAQ_DRAFTS_CHUNKS_PER_CALL": 1,
        "FAQ_DRAFTS_MAX_CALLS_PER_DOCUMENT": 2,
    }
    doc = document(AssistantFactory(), "Help centre", [(f"Part {i}", f"Text number {i}.") for i in range(5)])
    model.set_responder(lambda request: fake.text("[]"))

    assert faq_drafts_from_document(document_id=doc.pk) == 0

    assert len(model.requests) == 2


def test_a_long_document_stops_calling_before_the_task_time_limit_and_keeps_what_it_drafted(model, settings):
    # LLM_TIMEOUT_SECONDS is 5 with no retry: a 5.5 s deadline leaves 0.5 s for starting calls.
    settings.CAPTAIN = {**settings.CAPTAIN, "FAQ_DRAFTS_CHUNKS_PER_CALL": 1, "RUN_DEADLINE_SECONDS": 5.5}
    doc = document(AssistantFactory(), "Help centre", [SHIPPING, RETURNS])
    model.push(
        fake.delay(0.7, fake.text(pairs_json(("How long does delivery take?", "2 to 3 business days."))))
    )

    assert faq_drafts_from_document(document_id=doc.pk) == 1

    assert len(model.requests) == 1


def test_drafts_repeating_an_entry_in_english_or_chinese_are_skipped(model):
    assistant = AssistantFactory()
    FaqEntryFactory(
        assistant=assistant,
        question="How long does shipping take?",
        answer="Orders arrive in 3 to 5 business days.",
    )
    doc = document(
        assistant,
        "Shipping",
        [
            (
                "Times",
                "Orders arrive in 3 to 5 business days (3-5). Shipping costs 4.90 euros. 订单在3到5个工作日内送达。",
            )
        ],
    )
    model.push(
        fake.text(
            pairs_json(
                ("How many days until my order arrives?", "Delivery takes 3-5 business days."),
                ("运送需要多长时间？", "订单在3到5个工作日内送达。"),
                ("How much does shipping cost?", "Shipping costs 4.90 euros."),
                ("What does shipping cost?", "Shipping costs 4.90 euros."),  # same run: repeats the one above
            )
        )
    )

    assert faq_drafts_from_document(document_id=doc.pk) == 1

    assert list(FaqEntry.objects.filter(status="pending").values_list("question", flat=True)) == [
        "How much does shipping cost?"
    ]


def test_a_rejected_draft_is_not_proposed_again(model):
    assistant = AssistantFactory()
    doc = document(assistant, "Help centre", [SHIPPING])
    answer = pairs_json(("How long does delivery in Germany take?", "2 to 3 business days."))
    model.push(fake.text(answer), fake.text(answer))
    assert faq_drafts_from_document(document_id=doc.pk) == 1
    FaqEntry.objects.update(status="rejected")

    assert faq_drafts_from_document(document_id=doc.pk) == 0

    assert FaqEntry.objects.count() == 1


def test_a_document_that_is_not_ready_is_not_drafted_from(model):
    doc = document(AssistantFactory(), "Help centre", [SHIPPING])
    doc.status = "processing"
    doc.save()

    assert faq_drafts_from_document(document_id=doc.pk) == 0
    assert faq_drafts_from_document(document_id=987_654) == 0
    assert model.requests == []


def test_an_endpoint_the_account_may_not_use_is_not_called(model):
    assistant = AssistantFactory(model_endpoint="someone-elses")
    doc = document(assistant, "Help centre", [SHIPPING])

    assert faq_drafts_from_document(document_id=doc.pk) == 0
    assert model.requests == []


# ---- conversations ------------------------------------------------------------------------------------------


def conversation(
    *, answered_by: str = Message.SenderType.USER, status: str = Conversation.Status.RESOLVED, **kw
):
    link = AssistantInboxFactory(**kw)
    conv = ConversationFactory(
        contact_inbox__inbox=link.inbox, contact_inbox__contact__account=link.assistant.account, status=status
    )
    MessageFactory(conversation=conv, content="Hi, how long does shipping to Austria take?")
    MessageFactory(
        conversation=conv,
        message_type=Message.Type.OUTGOING,
        sender_type=answered_by,
        content="Shipping to Austria takes 4 business days. Anything else?",
    )
    return link.assistant, conv


def test_drafts_from_a_resolved_conversation_a_person_answered_once(model, redis_clean):
    assistant, conv = conversation()
    model.push(fake.text(pairs_json(("How long does shipping to Austria take?", "4 business days."))))

    assert faq_drafts_from_conversation(conversation_id=conv.pk) == 1
    assert faq_drafts_from_conversation(conversation_id=conv.pk) == 0  # never twice

    assert len(model.requests) == 1
    assert "Shipping to Austria takes 4 business days" in json.dumps(model.requests[0]["messages"])
    entry = FaqEntry.objects.get()
    assert (entry.status, entry.source, entry.source_conversation_id, entry.assistant_id) == (
        "pending",
        "conversation",
        conv.pk,
        assistant.pk,
    )
    assert (
        faq_draft_conversation_problem(conversation=conv)
        == "An FAQ draft was already written from this conversation."
    )


def test_a_conversation_the_ai_answered_or_not_resolved_is_not_drafted_from(model, redis_clean):
    _, by_ai = conversation(answered_by=Message.SenderType.ASSISTANT)
    _, still_open = conversation(status=Conversation.Status.OPEN)

    assert faq_drafts_from_conversation(conversation_id=by_ai.pk) == 0
    assert faq_drafts_from_conversation(conversation_id=still_open.pk) == 0

    assert model.requests == []
    assert "No person answered" in faq_draft_conversation_problem(conversation=by_ai)
    assert "Only resolved" in faq_draft_conversation_problem(conversation=still_open)


def test_a_person_s_number_must_come_from_the_person_not_the_customer(model, redis_clean):
    _, conv = conversation()
    model.push(fake.text(pairs_json(("How long does shipping to Austria take?", "7 business days."))))

    assert faq_drafts_from_conversation(conversation_id=conv.pk) == 0
    assert not FaqEntry.objects.exists()


def test_a_model_failure_on_a_conversation_can_be_tried_again(model, redis_clean):
    _, conv = conversation()
    model.push(fake.error(503), fake.text(pairs_json(("How long does shipping to Austria take?", "4 days."))))

    assert faq_drafts_from_conversation(conversation_id=conv.pk) == 0
    assert faq_drafts_from_conversation(conversation_id=conv.pk) == 1


def test_the_sweep_finds_new_human_answered_resolved_conversations_once(model, redis_clean):
    _, human = conversation()
    conversation(answered_by=Message.SenderType.ASSISTANT)
    conversation(status=Conversation.Status.OPEN)
    ConversationFactory(status=Conversation.Status.RESOLVED)  # no assistant serves its inbox

    assert faq_draft_conversation_candidates(limit=10) == [human.pk]
    model.push(fake.text("[]"))  # the model found nothing worth an entry
    assert faq_drafts_from_conversation(conversation_id=human.pk) == 0

    assert faq_draft_conversation_candidates(limit=10) == []  # marked: not asked again
    assert faq_drafts_conversations_sweep() == 0


def test_the_celery_tasks_take_ids_and_draft(model, redis_clean):
    from captain.knowledge.tasks import faq_drafts_from_conversation as conversation_task
    from captain.knowledge.tasks import faq_drafts_from_document as document_task

    doc = document(AssistantFactory(), "Help centre", [SHIPPING])
    _, conv = conversation()
    model.push(
        fake.text(pairs_json(("How long does delivery in Germany take?", "2 to 3 business days."))),
        fake.text(pairs_json(("How long does shipping to Austria take?", "4 business days."))),
    )

    assert document_task.apply(args=[doc.pk]).get() == 1
    assert conversation_task.apply(args=[conv.pk]).get() == 1
    assert FaqEntry.objects.filter(status="pending").count() == 2
