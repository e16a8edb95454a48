"""Answering from knowledge through the real run path: `run_for_message` with the `openai` SDK over HTTP against
the scripted model server, whose request log shows what the model was given."""

from __future__ import annotations

import json

import pytest

from captain.answering.models import CreditLedgerEntry, ReplyJob, Run, SpanRecord
from captain.answering.services.runs import run_for_message
from captain.knowledge.models import FaqEntry
from captain.runtime import semconv as sc
from helpdesk.models import Conversation, Message
from tests.factories import AssistantInboxFactory, ConversationFactory, FaqEntryFactory, MessageFactory
from tests.support.fake_llm_server import system_prompt, text

from .knowledge_rows import document, replies

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def shop(redis_url, llm_settings, settings):
    # The model's side of answering from sources; an FAQ entry sent as written has its own test below.
    settings.CAPTAIN = {**settings.CAPTAIN, "KNOWLEDGE_FAQ_ANSWER_SCORE": None}
    link = AssistantInboxFactory(
        assistant__product_name="Volta Bikes",
        assistant__description="Support for Volta Bikes, an e-bike rental and subscription service.",
    )
    assistant = link.assistant
    FaqEntryFactory(
        assistant=assistant,
        question="How much does the Monthly plan cost?",
        answer="The Monthly plan costs €49.90 per month and includes 2 batteries.",
    )
    document(
        assistant,
        "Stations",
        [("Opening hours", "Our stations are open 9:00-18:00, Monday to Saturday. Sundays closed.")],
        url="https://volta.example/help/stations",
    )
    return {"assistant": assistant, "inbox": link.inbox}


def ask(shop, content: str, *, earlier: list[tuple[str, str]] = ()) -> Message:
    conversation = ConversationFactory(contact_inbox__inbox=shop["inbox"])
    for kind, said in earlier:
        MessageFactory(conversation=conversation, content=said, message_type=kind)
    return MessageFactory(conversation=conversation, content=content, reply_job=ReplyJob.Status.PENDING)


def test_sources_are_injected_and_the_reply_cites_what_it_used(shop, llm_settings):
    message = ask(shop, "how much is the monthly plan?")
    llm_settings.push(text("The Monthly plan is €49.90 a month, with 2 batteries."))
    assert run_for_message(message_id=message.id) == "reply"
    prompt = system_prompt(llm_settings.requests[0])
    assert "## Sources\n[1] Q: How much does the Monthly plan cost?" in prompt
    assert "come ONLY from the sources" in prompt
    run = Run.objects.get()
    assert run.credit_used is True
    cited = [s for s in run.sources if s["cited"]]
    assert [s["ref"] for s in cited] == [f"faq:{FaqEntry.objects.get().id}"]
    span = SpanRecord.objects.get(name=sc.SPAN_KNOWLEDGE)
    assert span.attributes[sc.CAPTAIN_KNOWLEDGE_ACTION] == "answered"
    assert json.loads(span.attributes[sc.CAPTAIN_KNOWLEDGE_SOURCES])[0]["cited"] is True


def test_an_invented_number_is_written_again_once_naming_it(shop, llm_settings):
    message = ask(shop, "how much is the monthly plan?")
    llm_settings.push(text("It costs €59 a month."), text("It costs €49.90 a month."))
    assert run_for_message(message_id=message.id) == "reply"
    assert replies(message) == ["It costs €49.90 a month."]
    correction = system_prompt(llm_settings.requests[1])
    assert "## Correction\nYour previous answer could not be sent:\n- '59': no source says this" in correction
    run = Run.objects.get()
    assert run.llm_calls == 2 and run.credit_used is True


def test_a_reply_that_stays_ungrounded_is_replaced_by_the_source_sentence_that_clearly_answers(
    shop, llm_settings
):
    message = ask(shop, "how much is the monthly plan?")
    llm_settings.push(text("It costs $59."), text("It costs $59, really."))
    assert run_for_message(message_id=message.id) == "reply"
    assert replies(message) == ["The Monthly plan costs €49.90 per month and includes 2 batteries."]
    span = SpanRecord.objects.get(name=sc.SPAN_KNOWLEDGE)
    assert span.attributes[sc.CAPTAIN_KNOWLEDGE_ACTION] == "evidence_answer"
    assert json.loads(span.attributes[sc.CAPTAIN_KNOWLEDGE_UNSUPPORTED]) == [
        ["59, $ (in no source)"],
        ["59, $ (in no source)"],
    ]


def test_a_reply_that_stays_ungrounded_goes_to_people_free_with_an_honest_message(shop, llm_settings):
    # Asked in Chinese over English sources: no source sentence can be sent as it is, so people take it.
    message = ask(shop, "月度套餐每个月多少钱？")
    llm_settings.push(text("每月59美元。"), text("每月59美元，真的。"))
    assert run_for_message(message_id=message.id) == "human_handoff"
    run = Run.objects.get()
    assert "no source supports (grounding check)" in run.detail and "59" in run.detail
    assert run.credit_used is False
    assert CreditLedgerEntry.objects.count() == 0
    assert replies(message) == ["这个问题我不太确定，不想给您错误的信息，我请同事来帮您。"]
    conversation = Conversation.objects.get(pk=message.conversation_id)
    assert conversation.status == Conversation.Status.OPEN


def test_nothing_found_about_the_company_says_so_without_a_model_call_and_free(shop, llm_settings):
    message = ask(shop, "Do you also rent electric scooters for bike tours?")
    assert run_for_message(message_id=message.id) == "reply"
    assert llm_settings.requests == []
    assert replies(message) == [
        "I'm sorry, I don't have information about that. Would you like me to connect you with a member of "
        "our team?"
    ]
    run = Run.objects.get()
    assert run.credit_used is False and CreditLedgerEntry.objects.count() == 0
    span = SpanRecord.objects.get(name=sc.SPAN_KNOWLEDGE)
    assert span.attributes[sc.CAPTAIN_KNOWLEDGE_ACTION] == "unknown"
    assert span.attributes[sc.CAPTAIN_KNOWLEDGE_VERDICT] == "in_scope"


def test_nothing_found_can_hand_over_straight_away(shop, llm_settings):
    shop["assistant"].when_unknown = "handoff"
    shop["assistant"].save()
    message = ask(shop, "Do you also rent electric scooters for bike tours?")
    assert run_for_message(message_id=message.id) == "human_handoff"
    assert llm_settings.requests == []
    assert (
        message.conversation.__class__.objects.get(pk=message.conversation_id).status
        == Conversation.Status.OPEN
    )


def test_an_off_topic_question_gets_a_polite_refusal_in_the_customers_language(shop, llm_settings):
    message = ask(shop, "Who won the football World Cup in 2018?")
    assert run_for_message(message_id=message.id) == "reply"
    assert replies(message) == ["Sorry, I can only help with questions about Volta Bikes."]
    zh = ask(shop, "帮我写一首关于春天的诗")
    assert run_for_message(message_id=zh.id) == "reply"
    assert replies(zh) == ["抱歉，我只能回答与Volta Bikes相关的问题。"]
    assert llm_settings.requests == []


def test_small_talk_goes_to_the_model_with_the_rule_to_state_no_facts(shop, llm_settings):
    message = ask(shop, "hi there")
    llm_settings.push(text("Hello! How can I help you?"))
    assert run_for_message(message_id=message.id) == "reply"
    assert "Nothing in the knowledge base matches this message" in system_prompt(llm_settings.requests[0])


def test_a_follow_up_is_searched_with_the_previous_turn(shop, llm_settings):
    message = ask(
        shop,
        "and on sundays?",
        earlier=[
            (Message.Type.INCOMING, "when are your stations open?"),
            (Message.Type.OUTGOING, "Our stations are open 9:00-18:00, Monday to Saturday."),
        ],
    )
    llm_settings.push(text("On Sundays our stations are closed."))
    assert run_for_message(message_id=message.id) == "reply"
    assert "Opening hours\nOur stations are open 9:00-18:00" in system_prompt(llm_settings.requests[0])


def test_the_link_of_a_cited_source_is_added_when_the_assistant_wants_it(shop, llm_settings):
    shop["assistant"].cite_links = True
    shop["assistant"].save()
    message = ask(shop, "what are the opening hours of your stations?")
    llm_settings.push(text("Our stations are open 9:00-18:00, Monday to Saturday [1]."))
    assert run_for_message(message_id=message.id) == "reply"
    assert replies(message) == [
        "Our stations are open 9:00-18:00, Monday to Saturday.\n\nhttps://volta.example/help/stations"
    ]


def test_pending_and_disabled_entries_are_never_put_before_the_model(shop, llm_settings):
    FaqEntryFactory(
        assistant=shop["assistant"],
        question="How much does the Yearly plan cost?",
        answer="The Yearly plan costs €399.",
        status=FaqEntry.Status.PENDING,
    )
    FaqEntryFactory(
        assistant=shop["assistant"],
        question="How much does the Weekly plan cost?",
        answer="The Weekly plan costs €19.",
        enabled=False,
    )
    for question in ("how much is the yearly plan?", "how much is the weekly plan?"):
        message = ask(shop, question)
        llm_settings.push(text("Let me check."))
        run_for_message(message_id=message.id)
    prompts = " ".join(system_prompt(r) for r in llm_settings.requests)
    assert "€399" not in prompts and "€19" not in prompts


def test_a_clearly_matching_approved_answer_is_sent_as_written_and_charged(shop, llm_settings, settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "KNOWLEDGE_FAQ_ANSWER_SCORE": 0.65}
    message = ask(shop, "how much does the monthly plan cost?")
    assert run_for_message(message_id=message.id) == "reply"
    assert llm_settings.requests == []
    assert replies(message) == ["The Monthly plan costs €49.90 per month and includes 2 batteries."]
    run = Run.objects.get()
    assert run.credit_used is True  # an answer, unlike "I don't know"
    assert [s["cited"] for s in run.sources if s["kind"] == "faq"] == [True]
    # Asked in Chinese, the English answer is not pasted: the model answers in the customer's language.
    zh = ask(shop, "月度套餐多少钱？")
    llm_settings.push(text("月度套餐每月 €49.90，含 2 块电池。"))
    assert run_for_message(message_id=zh.id) == "reply"
    assert len(llm_settings.requests) == 1
