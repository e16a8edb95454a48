"""An approved FAQ answer goes out as written only when it is the question asked, on the real run path
(`run_for_message`, the bundled encoder, the `openai` SDK over HTTP to the scripted model server): a question about
the child seat on a day rental is close to "How much is a day rental?" but is not that question, and the day
rental's price would be a wrong answer to it."""

from __future__ import annotations

import pytest

from captain.answering.models import Run, SpanRecord
from captain.answering.services.runs import run_for_message
from captain.runtime import semconv as sc
from tests.factories import AssistantInboxFactory, FaqEntryFactory
from tests.support.fake_llm_server import system_prompt, text

from .knowledge_rows import ask, document, replies

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def rentals(redis_url, llm_settings, settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "KNOWLEDGE_FAQ_ANSWER_SCORE": 0.65, "RECORD_CONTENT": True}
    link = AssistantInboxFactory(
        assistant__product_name="Zephyr Wheels",
        assistant__description="Support for Zephyr Wheels, an e-bike rental service.",
    )
    FaqEntryFactory(
        assistant=link.assistant,
        question="How much is a day rental?",
        answer="A day rental costs S$25 and the bike is due back by 22:00.",
    )
    document(
        link.assistant,
        "Day rental",
        [
            ("Child seats", "A child seat costs S$5 per day and fits children up to 22 kg."),
            ("Batteries", "A second battery costs S$8 per day."),
            ("Returning the bike", "Bring the bike back to the hub you rented it from by 22:00."),
            ("Deposit", "We hold a S$100 deposit on your card and release it within 3 working days."),
        ],
    )
    return link


def test_the_approved_answer_to_the_question_asked_is_sent_as_written(rentals, llm_settings):
    message = ask(rentals, "how much does a day rental cost?")
    assert run_for_message(message_id=message.id) == "reply"
    assert llm_settings.requests == []
    assert replies(message) == ["A day rental costs S$25 and the bike is due back by 22:00."]


def test_a_question_about_a_thing_the_entry_leaves_out_goes_to_the_model(rentals, llm_settings):
    message = ask(rentals, "how much is a child seat on a day rental?")
    llm_settings.push(text("A child seat costs S$5 per day."))
    assert run_for_message(message_id=message.id) == "reply"
    assert len(llm_settings.requests) == 1, (
        "the day rental's price is not the answer: the model reads the sources"
    )
    assert "A child seat costs S$5 per day" in system_prompt(llm_settings.requests[0])
    assert replies(message) == ["A child seat costs S$5 per day."]
    assert Run.objects.get().credit_used is True
    span = SpanRecord.objects.get(name=sc.SPAN_KNOWLEDGE)
    assert span.attributes[sc.CAPTAIN_KNOWLEDGE_ACTION] == "answered"
    assert span.attributes[sc.CAPTAIN_KNOWLEDGE_FAQ_LEFT_OUT] == "child, seat"
