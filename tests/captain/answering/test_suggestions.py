"""Follow-up suggestions: one small model call after a reply, with the real `openai` SDK over HTTP against the
scripted model server. What the model says is cleaned (at most three, no empty, repeated or over-long ones), and
any failure of the call gives no suggestions, never a failed reply."""

from __future__ import annotations

import json
import time

import pytest
from opentelemetry import trace

from captain.answering.models import CreditBalance, CreditLedgerEntry, ReplyJob, Run, SpanRecord
from captain.answering.services.runs import run_for_message
from captain.answering.services.suggestions import (
    MAX_SUGGESTION_CHARS,
    MAX_TOKENS,
    parse_suggestions,
    reply_with_suggestions,
    suggest_follow_ups,
    suggestions_model_client,
)
from captain.answering.services.team import team_model_for
from captain.runtime import Reply, Usage
from helpdesk.channels.api_channel import signed_headers
from helpdesk.models import Message
from helpdesk.tasks import message_deliver
from tests.factories import AssistantFactory, AssistantInboxFactory, ConversationFactory, MessageFactory
from tests.support.callback_receiver import CallbackReceiver
from tests.support.fake_llm_server import (
    Step,
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
REFUND_POLICY = "Refunds reach the customer's card within 5 working days."


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


# ---- attaching them to a reply -----------------------------------------------------------------------------


def attach(assistant, reply, *, seconds_left=60.0, usage=None):
    team_model = team_model_for(assistant)
    return reply_with_suggestions(
        assistant,
        reply,
        endpoint=team_model.endpoint,
        model=team_model.model,
        history=HISTORY,
        usage=usage,
        seconds_left=seconds_left,
    )


def test_a_model_reply_gets_its_suggestions_attached(assistant, llm_settings):
    llm_settings.push(text(suggestions_json("Can I cancel?", "Is shipping free?")))
    reply = attach(assistant, Reply(REPLY, reasoning="from the FAQ"))
    assert reply == Reply(REPLY, reasoning="from the FAQ", suggestions=("Can I cancel?", "Is shipping free?"))


def test_a_fixed_text_reply_gets_none_and_costs_no_call(assistant, llm_settings):
    fixed = Reply("I could not find that in our help centre.", billable=False)
    assert attach(assistant, fixed) is fixed
    assert llm_settings.requests == []


def test_no_call_when_the_run_has_no_time_left(assistant, llm_settings):
    reply = Reply(REPLY)
    assert attach(assistant, reply, seconds_left=1.9) is reply  # a timeout under a second: not worth a call
    assert llm_settings.requests == []


def test_the_timeout_never_exceeds_the_time_left_before_the_deadline(assistant, llm_settings):
    llm_settings.push(delay(3, text(suggestions_json("Too late?"))))
    started = time.monotonic()
    assert attach(assistant, Reply(REPLY), seconds_left=2.4).suggestions == ()  # cut off after 1.2 s
    assert time.monotonic() - started < 2.4


def test_a_failing_call_leaves_the_reply_as_it_was(assistant, llm_settings):
    llm_settings.push(error(500))
    reply = Reply(REPLY)
    assert attach(assistant, reply) is reply


# ---- end to end, in process: webhook -> run -> outcome -> delivery ------------------------------------------


def scripted(request: dict) -> Step:
    """The team's call gets the answer, the suggestions' call (known by its response format) the questions."""
    response_format = request.get("response_format") or {}
    if response_format.get("json_schema", {}).get("name") == "follow_up_questions":
        return text(suggestions_json("Can I get the refund on another card?", "How do I track my refund?"))
    return text(REPLY, prompt_tokens=300, completion_tokens=14)


def test_a_reply_with_suggestions_is_stored_charged_once_and_delivered_with_them(
    client, redis_url, llm_settings, django_capture_on_commit_callbacks
):
    llm_settings.set_responder(scripted)
    with CallbackReceiver() as receiver:
        link = AssistantInboxFactory(
            assistant__suggestions_enabled=True,
            # The reply's "5 working days" must come from somewhere the grounding check accepts.
            assistant__instructions=REFUND_POLICY,
            inbox__callback_url=receiver.url,
            inbox__secret="api-secret",
        )
        body = json.dumps(
            {
                "message_id": "m-1",
                "contact": {"id": "cust-1", "name": "Ann"},
                "text": "How long does a refund take?",
            }
        ).encode()
        with django_capture_on_commit_callbacks(execute=False):
            response = client.post(
                f"/webhooks/api/{link.inbox.webhook_token}/",
                data=body,
                content_type="application/json",
                headers=signed_headers("api-secret", body),
            )
        assert response.status_code == 200
        incoming = Message.objects.get(message_type=Message.Type.INCOMING)

        with django_capture_on_commit_callbacks(execute=False):
            assert run_for_message(message_id=incoming.id) == "reply"
        reply = Message.objects.get(message_type=Message.Type.OUTGOING)
        assert reply.content == REPLY
        assert reply.quick_replies == ["Can I get the refund on another card?", "How do I track my refund?"]
        # One charge for the reply; the suggestions cost nothing of their own.
        assert CreditLedgerEntry.objects.count() == 1
        assert CreditBalance.objects.get(account=link.assistant.account).used == 1
        run = Run.objects.get()
        assert run.credit_used is True
        assert run.llm_calls == 2  # the team's call and the suggestions' call, both counted in tokens
        assert [bool(r.get("response_format")) for r in llm_settings.requests] == [False, True]

        assert message_deliver.apply(args=[reply.id]).get() == "sent"
    [event] = receiver.events
    assert event["json"]["text"] == REPLY
    assert event["json"]["suggestions"] == reply.quick_replies


def test_suggestions_that_fail_still_deliver_the_reply_charged_once(redis_url, llm_settings):
    def failing_suggestions(request: dict) -> Step:
        if request.get("response_format"):
            return error(500)
        return text(REPLY)

    llm_settings.set_responder(failing_suggestions)
    link = AssistantInboxFactory(assistant__suggestions_enabled=True, assistant__instructions=REFUND_POLICY)
    incoming = MessageFactory(
        conversation=ConversationFactory(contact_inbox__inbox=link.inbox),
        content="How long does a refund take?",
        reply_job=ReplyJob.Status.PENDING,
    )
    assert run_for_message(message_id=incoming.id) == "reply"
    reply = Message.objects.get(message_type=Message.Type.OUTGOING)
    assert (reply.content, reply.quick_replies) == (REPLY, [])
    assert CreditLedgerEntry.objects.count() == 1
