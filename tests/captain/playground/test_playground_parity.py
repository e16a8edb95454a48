"""The playground runs a turn through the same TeamRunner as production: with the same scripted model, the same
message gives the same route, routing decisions and outcome in both."""

from __future__ import annotations

import copy
import re

import pytest

from captain.answering.models import ReplyJob, Run, SpanRecord
from captain.answering.services.runs import run_for_message
from captain.playground.services.playground import playground_run
from captain.routing.services.routing import GraphSpec, routing_replace
from helpdesk.models import Message
from tests.factories import AssistantInboxFactory, ConversationFactory, MessageFactory, ScenarioFactory
from tests.support import fake_llm_server as fake

pytestmark = pytest.mark.django_db


def scripted(request: dict) -> fake.Step:
    """Answers from the request alone, so both runs get the same answers whatever the order."""
    if request.get("response_format"):  # the router model (mode `router`, JSON-schema enum)
        return fake.text(
            '{"route": "shipping"}' if "parcel" in fake.last_user_message(request) else '{"route": "stay"}'
        )
    if "handoff_to_assistant" in fake.offered_tools(request):  # a specialist answers
        return fake.text("Your parcel left the depot today.", prompt_tokens=50, completion_tokens=9)
    return fake.text("How can I help?")


@pytest.fixture
def team(redis_url, settings):
    with fake.FakeLLMServer(responder=scripted) as model:
        settings.CAPTAIN = {
            **settings.CAPTAIN,
            "OPENAI_BASE_URL": model.base_url,
            "OPENAI_API_KEY": "test",
            "LLM_TIMEOUT_SECONDS": 5.0,
            "LLM_MAX_RETRIES": 0,
        }
        link = AssistantInboxFactory()
        ScenarioFactory(
            assistant=link.assistant, key="refunds", title="Refunds", description="Refund requests"
        )
        ScenarioFactory(assistant=link.assistant, key="shipping", title="Shipping", description="Deliveries")
        routing_replace(
            assistant=link.assistant,
            spec=GraphSpec(
                config={"default_mode": "router"},
                rules=[{"node": "assistant", "match": "contains", "value": "refund", "target": "refunds"}],
            ),
        )
        yield link, model
    from captain.assistants.services import model_endpoints

    model_endpoints.operator_clients_clear()


def router_spans(trace_id: str) -> list[tuple]:
    return [
        (
            s.attributes["captain.router.node"],
            s.attributes["captain.router.phase"],
            s.attributes["captain.router.strategy"],
            s.attributes["captain.router.decision"],
            s.attributes.get("captain.router.raw_output", ""),
        )
        for s in SpanRecord.objects.filter(trace_id=trace_id, name="captain.router").order_by(
            "start_time", "id"
        )
    ]


# The turn context is a system message of its own (after the fixed prompt), "Context of this turn ..." first.
_TURN_CONTEXT = re.compile(r"(?:\A|\n\n)Context of this turn .*?(?=\n\nReply format:|\Z)", re.DOTALL)


def without_turn_context(requests: list[dict]) -> tuple[list[dict], list[str]]:
    """The requests with each system prompt's turn context cut out, and the cut-out blocks. The context is the
    one part that must differ: production knows the conversation (status, channel), the playground has none."""
    stripped, blocks = copy.deepcopy(requests), []
    for request in stripped:
        for message in request["messages"]:
            if message["role"] == "system" and isinstance(message["content"], str):
                blocks += _TURN_CONTEXT.findall(message["content"])
                message["content"] = _TURN_CONTEXT.sub("", message["content"])
    return stripped, blocks


@pytest.mark.parametrize("text", ["where is my parcel?", "I want a refund", "hello there"])
def test_the_playground_routes_and_answers_exactly_as_production(team, text):
    link, model = team
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox)
    # The playground has no contact: a nameless one makes the two prompts comparable byte for byte.
    conversation.contact.name = ""
    conversation.contact.save(update_fields=["name"])
    message = MessageFactory(conversation=conversation, content=text, reply_job=ReplyJob.Status.PENDING)

    production_outcome = run_for_message(message_id=message.id)
    run = Run.objects.get()
    production_requests = list(model.requests)
    model.requests.clear()

    turn = playground_run(assistant=link.assistant, start_key="assistant", history=[], message=text)

    assert turn.outcome == production_outcome
    assert turn.route == run.route
    assert turn.text == Message.objects.get(pk=run.reply_message_id).content
    assert router_spans(turn.trace_id) == router_spans(run.trace_id)
    assert router_spans(run.trace_id)  # the comparison is about real decisions, not two empty lists
    # Every model request the playground made is the one production made (same prompts, same tools), but for
    # the turn context, which only production can fill with the conversation's state.
    playground, playground_context = without_turn_context(model.requests)
    production, production_context = without_turn_context(production_requests)
    assert playground == production
    assert production_context and playground_context
    assert all("- Conversation: status pending" in block for block in production_context)
    assert not any("- Conversation:" in block for block in playground_context)
