"""End to end with real parts: a signed webhook goes in through Django, a real Celery worker process takes the
task from a real redis-server, the real `openai` SDK talks HTTP to the scripted model server, and the reply is
POSTed (signed) to a callback receiver. Nothing is mocked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from captain.answering.models import CreditLedgerEntry, Run, SpanRecord
from helpdesk.channels.api_channel import signed_headers, verify
from helpdesk.models import Conversation, Delivery, Message
from tests.factories import AssistantInboxFactory, ScenarioFactory
from tests.support import fake_llm_server as fake
from tests.support.callback_receiver import CallbackReceiver
from tests.support.database import database_url_for_subprocess
from tests.support.servers import start_celery_worker, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def scripted_model(request: dict) -> fake.Step:
    """Decide from the request itself, so the answer is right whatever order the worker calls in."""
    tools = fake.offered_tools(request)
    last = fake.last_user_message(request).lower()
    if "human" in last:
        return fake.tool_call("handoff_to_human", {"reason": "customer asked for a person"})
    if "handoff_to_refunds" in tools:  # triage: route refund questions to the specialist
        return fake.tool_call("handoff_to_refunds", {"reason": "refund request"})
    if "specialist" in fake.system_prompt(request):
        return fake.text("Your refund for order 42 is on its way.", prompt_tokens=200, completion_tokens=12)
    return fake.text("How can I help?")


@pytest.fixture
def stack(redis_url, tmp_path: Path):
    with fake.FakeLLMServer(responder=scripted_model) as model, CallbackReceiver() as receiver:
        worker = start_celery_worker(
            env={
                "DATABASE_URL": database_url_for_subprocess(),
                "REDIS_URL": redis_url,
                "OPENAI_BASE_URL": model.base_url,
                "OPENAI_API_KEY": "test",
                "CAPTAIN_LLM_TIMEOUT": "5",
                "CAPTAIN_LLM_MAX_RETRIES": "0",
            },
            log_path=tmp_path / "worker.log",
        )
        try:
            yield {"model": model, "receiver": receiver, "worker": worker}
        finally:
            worker.stop()


def send(client, inbox, message_id: str, text: str):
    body = json.dumps(
        {"message_id": message_id, "contact": {"id": "cust-1", "name": "Ann"}, "text": text}
    ).encode()
    return client.post(
        f"/webhooks/api/{inbox.webhook_token}/",
        data=body,
        content_type="application/json",
        headers=signed_headers(inbox.secret, body),
    )


def test_specialist_answers_reply_is_delivered_and_charged_once(client, stack):
    link = AssistantInboxFactory(inbox__callback_url=stack["receiver"].url, inbox__secret="e2e-secret")
    ScenarioFactory(assistant=link.assistant, title="Refunds", key="refunds", description="Refund requests")

    response = send(client, link.inbox, "m-1", "I want a refund for order 42")
    assert response.status_code == 200

    receiver = stack["receiver"]
    wait_for(
        lambda: receiver.events, timeout=60, what=f"a delivered reply; worker log:\n{stack['worker'].log()}"
    )
    event = receiver.events[0]
    verify(secret="e2e-secret", headers=event["headers"], body=event["body"], window_seconds=300)
    assert event["json"]["text"] == "Your refund for order 42 is on its way."
    assert event["json"]["sender"] == {"type": "assistant", "agent_key": "refunds", "name": "Refunds"}

    run = Run.objects.get()
    assert run.route == ["assistant", "refunds"]
    assert run.outcome == "reply" and run.credit_used
    assert CreditLedgerEntry.objects.count() == 1
    reply = Message.objects.get(message_type="outgoing", private=False)
    wait_for(lambda: Delivery.objects.get(pk=reply.pk).status == "sent", timeout=10, what="sent status")

    run_span = SpanRecord.objects.get(trace_id=run.trace_id, name="captain.run")
    assert run_span.attributes["captain.credit_used"] is True
    # Trace context flowed from the web request into the worker: one trace from webhook to reply.
    webhook_span = SpanRecord.objects.get(trace_id=run.trace_id, name="helpdesk.webhook")
    assert webhook_span.parent_span_id == ""
    names = set(SpanRecord.objects.filter(trace_id=run.trace_id).values_list("name", flat=True))
    assert {"captain.task", "captain.agent", "gen_ai.chat", "captain.handoff"} <= names

    # A duplicate delivery of the same webhook changes nothing.
    assert send(client, link.inbox, "m-1", "I want a refund for order 42").json()["status"] == "duplicate"


def test_human_handoff_is_delivered_and_costs_nothing(client, stack):
    link = AssistantInboxFactory(inbox__callback_url=stack["receiver"].url)
    assert send(client, link.inbox, "m-9", "Let me talk to a human please").status_code == 200

    receiver = stack["receiver"]
    wait_for(
        lambda: receiver.events, timeout=60, what=f"the handoff message; worker log:\n{stack['worker'].log()}"
    )
    assert receiver.events[0]["json"]["text"] == link.assistant.handoff_message
    conversation = Conversation.objects.get()
    assert conversation.status == Conversation.Status.OPEN
    # The model's bare label reads in plain words for agents (captain.answering.services.handoff_reasons).
    assert conversation.escalation_reason == "The customer asked for a person."
    assert CreditLedgerEntry.objects.count() == 0
    run = Run.objects.get()
    assert run.outcome == "human_handoff" and run.credit_used is False
    assert (
        SpanRecord.objects.get(trace_id=run.trace_id, name="captain.run").attributes["captain.credit_used"]
        is False
    )
