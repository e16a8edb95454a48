"""Replies whose every value is in a source and still wrong, on the real run path (`run_for_message`, the `openai`
SDK over HTTP to the scripted model server, a real Redis lock, the bundled encoder): a "yes" where the sentence that
answers says "no" gets that sentence instead, and one boat's fare given when the customer named no boat gets one
question back. Neither is charged as a guess would be."""

from __future__ import annotations

import pytest

from captain.answering.models import ReplyJob, Run, SpanRecord
from captain.answering.services.runs import run_for_message
from captain.runtime import semconv as sc
from captain.runtime.promises import HONEST_HANDOFF
from tests.factories import AssistantInboxFactory, FaqEntryFactory, MessageFactory
from tests.support.fake_llm_server import text

from .knowledge_rows import ask, document, replies

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def ferries(redis_url, llm_settings, settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "KNOWLEDGE_FAQ_ANSWER_SCORE": None}
    link = AssistantInboxFactory(
        assistant__product_name="Tidewater Ferries",
        assistant__description="Support for Tidewater Ferries: fares, luggage and timetables.",
    )
    document(
        link.assistant,
        "Luggage",
        [
            ("Bicycles", "Bicycles travel on the express boat for €3 per trip."),
            ("Sports equipment", "Surfboards and canoes are not allowed on the express boat."),
        ],
    )
    document(
        link.assistant,
        "Fares",
        [
            (
                "Express boat",
                "| Ticket | Price |\n|---|---|\n| Adult single | €9 |\n| Child single | €4.50 |",
            ),
            ("Slow ferry", "| Ticket | Price |\n|---|---|\n| Adult single | €6 |\n| Child single | €3 |"),
        ],
    )
    return link


def test_a_yes_where_the_source_says_no_gets_the_customer_that_sentence(ferries, llm_settings):
    message = ask(ferries, "Can I bring my canoe on the express boat?")
    said = "Yes, you can bring your canoe on the express boat for €3 per trip."
    llm_settings.push(text(said))
    assert run_for_message(message_id=message.id) == "reply"
    assert replies(message) == ["Surfboards and canoes are not allowed on the express boat."]
    assert said not in replies(message)
    assert len(llm_settings.requests) == 1, "the model read that sentence once and said yes: no rewrite"
    span = SpanRecord.objects.get(name=sc.SPAN_KNOWLEDGE)
    assert span.attributes[sc.CAPTAIN_KNOWLEDGE_ACTION] == "evidence_answer"


def test_one_boats_fare_for_a_customer_who_named_no_boat_gets_one_question_back_free(ferries, llm_settings):
    message = ask(ferries, "How much is an adult single ticket?")
    llm_settings.push(text("An adult single ticket costs €9."))
    assert run_for_message(message_id=message.id) == "reply"
    assert replies(message) == ["To give you the right answer: do you mean Express boat or Slow ferry?"]
    span = SpanRecord.objects.get(name=sc.SPAN_KNOWLEDGE)
    assert span.attributes[sc.CAPTAIN_KNOWLEDGE_ACTION] == "clarify"
    assert Run.objects.get().credit_used is False


def test_the_fare_of_the_boat_the_customer_named_is_sent(ferries, llm_settings):
    message = ask(ferries, "How much is an adult single on the slow ferry?")
    llm_settings.push(text("An adult single on the slow ferry costs €6."))
    assert run_for_message(message_id=message.id) == "reply"
    assert replies(message) == ["An adult single on the slow ferry costs €6."]
    assert Run.objects.get().credit_used is True


def test_the_customers_answer_to_the_question_back_gets_the_fare_of_that_boat(ferries, llm_settings):
    message = ask(ferries, "How much is an adult single ticket?")
    llm_settings.push(text("An adult single ticket costs €9."))
    assert run_for_message(message_id=message.id) == "reply"
    answer = MessageFactory(
        conversation=message.conversation, content="the slow ferry", reply_job=ReplyJob.Status.PENDING
    )
    llm_settings.push(text("An adult single on the slow ferry costs €6."))
    assert run_for_message(message_id=answer.id) == "reply"
    assert replies(message)[-1] == "An adult single on the slow ferry costs €6."
    # The follow-up was searched and checked with the question it answers: the slow ferry's row is its evidence.
    assert "Slow ferry" in llm_settings.requests[-1]["messages"][1]["content"]


def test_a_short_follow_up_is_answered_by_the_model_not_by_the_faq_entry_of_the_question_before(
    ferries, llm_settings, settings
):
    settings.CAPTAIN = {**settings.CAPTAIN, "KNOWLEDGE_FAQ_ANSWER_SCORE": 0.65}  # the product's default
    FaqEntryFactory(
        assistant=ferries.assistant,
        question="How much is a child single on the express boat?",
        answer="A child single on the express boat costs €4.50.",
    )
    first = ask(ferries, "How much is a child single on the express boat?")
    assert run_for_message(message_id=first.id) == "reply"
    assert replies(first) == ["A child single on the express boat costs €4.50."]
    assert llm_settings.requests == []  # the approved answer, as written
    follow_up = MessageFactory(
        conversation=first.conversation, content="and for adults?", reply_job=ReplyJob.Status.PENDING
    )
    llm_settings.push(text("An adult single on the express boat costs €9."))
    assert run_for_message(message_id=follow_up.id) == "reply"
    assert replies(first)[-1] == "An adult single on the express boat costs €9."
    assert len(llm_settings.requests) == 1


def test_a_no_about_something_no_source_mentions_gets_people_free(ferries, llm_settings):
    # No source says anything about student discounts: the model's "no" is as invented as a "yes" would be.
    message = ask(ferries, "Is there a student discount on the adult single for the express boat?")
    said = "No, there is no student discount on the adult single for the express boat."
    llm_settings.push(text(said), text(said))
    outcome = run_for_message(message_id=message.id)
    assert said not in replies(message)
    # Nor the adult fare that scores closest: no source sentence answers a question about student discounts.
    assert replies(message) == [HONEST_HANDOFF["en"]]
    correction = llm_settings.requests[1]["messages"][1]["content"]
    assert "no source says anything about 'student', 'discount'" in correction
    run = Run.objects.get()
    assert (outcome, run.credit_used) == ("human_handoff", False)
    span = SpanRecord.objects.get(name=sc.SPAN_KNOWLEDGE)
    assert span.attributes[sc.CAPTAIN_KNOWLEDGE_ACTION] == "grounding_handoff"
