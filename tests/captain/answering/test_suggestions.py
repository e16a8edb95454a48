"""Follow-up suggestions: one small model call after a reply is sent, with the real `openai` SDK over HTTP
against the scripted model server. What the model says is cleaned (at most three, no empty, repeated or
over-long ones), and any failure of the call gives no suggestions, never a failed reply."""

from __future__ import annotations

import json
import time

import pytest
from opentelemetry import trace

from captain.answering.models import SpanRecord
from captain.answering.services.suggestions import (
    MAX_SUGGESTION_CHARS,
    MAX_TOKENS,
    parse_suggestions,
    suggest_follow_ups,
    suggestions_model_client,
)
from captain.answering.services.team import team_model_for
from captain.runtime import Usage
from tests.factories import AssistantFactory
from tests.support.fake_llm_server import (
    delay,
    error,
    invalid_json,
    last_user_message,
    system_prompt,
    text,
)

pytestmark = [pytest.mark.django_db]

HISTORY = [
    {"role": "user", "content": "How long does a refund take?"},
]
REPLY = "Refunds reach your card within 5 working days."


@pytest.fixture
def assistant():
    return AssistantFactory(
        suggestions_enabled=True,
        suggestions_persona="Short questions a first-time buyer would ask next.",
        description="Answers questions about orders, shipping and refunds of the Acme Shop.",
    )


@pytest.fixture
def client_and_model(assistant, llm_settings):
    team_model = team_model_for(assistant)
    return suggestions_model_client(team_model.endpoint, timeout=5.0), team_model.model


def suggest(assistant, client_and_model, *, history=HISTORY, reply=REPLY, usage=None):
    client, model = client_and_model
    return suggest_follow_ups(
        assistant, model_client=client, model=model, history=history, reply_text=reply, usage=usage
    )


def suggestion_spans() -> list[SpanRecord]:
    trace.get_tracer_provider().force_flush()
    spans = SpanRecord.objects.filter(name="gen_ai.chat")
    return [s for s in spans if s.attributes.get("gen_ai.agent.id") == "suggestions"]


def suggestions_json(*questions: str) -> str:
    return json.dumps({"suggestions": list(questions)})


def test_good_json_gives_the_questions_with_one_small_structured_call(
    assistant, client_and_model, llm_settings
):
    llm_settings.push(
        text(suggestions_json("Can I get the refund on another card?", "How do I track my refund?"))
    )
    assert suggest(assistant, client_and_model) == [
        "Can I get the refund on another card?",
        "How do I track my refund?",
    ]
    [request] = llm_settings.requests
    assert request["max_tokens"] == MAX_TOKENS
    schema = request["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["suggestions"]["maxItems"] == 3
    assert "tools" not in request
    # The assistant's own persona and scope, and the conversation and reply as data in the user message.
    assert "Short questions a first-time buyer would ask next." in system_prompt(request)
    assert "orders, shipping and refunds" in system_prompt(request)
    assert "How long does a refund take?" in last_user_message(request)
    assert REPLY in last_user_message(request)
    assert "How long does a refund take?" not in system_prompt(request)


def test_the_builtin_persona_is_used_when_the_assistant_has_none(assistant, client_and_model, llm_settings):
    assistant.suggestions_persona = "  "
    llm_settings.push(text(suggestions_json("Where is my parcel?")))
    assert suggest(assistant, client_and_model) == ["Where is my parcel?"]
    assert "after reading the assistant's answer" in system_prompt(llm_settings.requests[0])


def test_a_chinese_customer_gets_questions_asked_for_in_chinese(assistant, client_and_model, llm_settings):
    llm_settings.push(text(suggestions_json("退款多久到账？")))
    history = [{"role": "user", "content": "我想退款"}]
    assert suggest(assistant, client_and_model, history=history, reply="好的，已为您发起退款。") == [
        "退款多久到账？"
    ]
    assert "Simplified Chinese" in system_prompt(llm_settings.requests[0])


def test_more_than_three_empty_repeated_and_over_long_ones_are_dropped(
    assistant, client_and_model, llm_settings
):
    too_long = "Could you " + "please " * 20 + "explain?"
    assert len(too_long) > MAX_SUGGESTION_CHARS
    llm_settings.push(
        text(
            suggestions_json(
                "  How do I   track it? ",
                "",
                "how do I track it",  # the same question, other case and punctuation
                too_long,
                "How long does a refund take?",  # what the customer just asked
                "Can I cancel?",
                "Is shipping free?",
                "Do you ship abroad?",
            )
        )
    )
    assert suggest(assistant, client_and_model) == [
        "How do I track it?",
        "Can I cancel?",
        "Is shipping free?",
    ]


@pytest.mark.parametrize(
    "answer",
    [
        '{"suggestions": ["How do I track it?", ',  # broken off mid-array
        "Sure! The customer might want to know about tracking.",  # prose, no list
        '{"questions": 3}',  # JSON of another shape
        "",
    ],
)
def test_an_unreadable_answer_gives_no_suggestions(assistant, client_and_model, llm_settings, answer):
    llm_settings.push(text(answer))
    assert suggest(assistant, client_and_model) == []


def test_a_fenced_or_bare_list_answer_is_still_read():
    assert parse_suggestions('Here you go:\n```json\n["Can I pay later?", "Is there a warranty?"]\n```') == [
        "Can I pay later?",
        "Is there a warranty?",
    ]
    assert parse_suggestions("1. Can I pay later?\n2) Is there a warranty?\nThanks!") == [
        "Can I pay later?",
        "Is there a warranty?",
    ]


def test_an_endpoint_refusing_the_json_format_is_asked_plainly_and_its_list_read(
    assistant, client_and_model, llm_settings
):
    llm_settings.push(error(400), text("- Can I pay later?\n- Is there a warranty?"))
    assert suggest(assistant, client_and_model) == ["Can I pay later?", "Is there a warranty?"]
    assert "response_format" in llm_settings.requests[0]
    assert "response_format" not in llm_settings.requests[1]


@pytest.mark.parametrize("failure", [error(500), error(429, retry_after=0), error(401), invalid_json()])
def test_model_errors_give_no_suggestions_and_no_retry(assistant, client_and_model, llm_settings, failure):
    llm_settings.push(failure)
    assert suggest(assistant, client_and_model) == []
    assert len(llm_settings.requests) == 1  # no retry: suggestions never hold a reply back for long


def test_a_slow_model_is_cut_off_by_the_short_timeout(assistant, llm_settings):
    team_model = team_model_for(assistant)
    client = suggestions_model_client(team_model.endpoint, timeout=0.5)
    llm_settings.push(delay(3, text(suggestions_json("Too late?"))))
    started = time.monotonic()
    result = suggest_follow_ups(
        assistant, model_client=client, model=team_model.model, history=HISTORY, reply_text=REPLY
    )
    assert result == []
    assert time.monotonic() - started < 2.5


def test_a_disabled_assistant_makes_no_call(assistant, client_and_model, llm_settings):
    assistant.suggestions_enabled = False
    assert suggest(assistant, client_and_model) == []
    assert llm_settings.requests == []


def test_the_call_is_an_llm_span_of_the_debug_log_and_its_tokens_join_the_run_usage(
    assistant, client_and_model, llm_settings
):
    llm_settings.push(text(suggestions_json("Can I cancel?"), prompt_tokens=210, completion_tokens=12))
    usage = Usage(requests=1, input_tokens=500, output_tokens=40)
    assert suggest(assistant, client_and_model, usage=usage) == ["Can I cancel?"]
    assert (usage.requests, usage.input_tokens, usage.output_tokens) == (2, 710, 52)
    [span] = suggestion_spans()
    assert span.attributes["gen_ai.usage.input_tokens"] == 210
    assert span.attributes["gen_ai.usage.output_tokens"] == 12
    assert span.attributes["captain.agent.turn"] == 2  # after the run's one call
    assert "Can I cancel?" in span.attributes["gen_ai.output.messages"]
    assert span.status != "ERROR"


def test_a_failed_call_is_an_error_span(assistant, client_and_model, llm_settings):
    llm_settings.push(error(503))
    assert suggest(assistant, client_and_model) == []
    [span] = suggestion_spans()
    assert span.status == "ERROR"
    assert span.attributes["captain.llm.error"] == "server_error"


# After the reply, from the background lane (the reply never waits for the call), delivered as a follow-up message:
# tests/captain/answering/test_suggestions_follow_up.py.
