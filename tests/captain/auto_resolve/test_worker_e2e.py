"""Auto-resolve with real parts: a customer message in through the webhook, the AI's reply from a real Celery
worker, then the conversation goes quiet; the beat task (run here) queues the judgement on the real broker, the
worker asks the scripted model over HTTP, and the verdict reaches the customer's channel. Nothing is mocked."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from captain.answering.models import CreditLedgerEntry, Run
from helpdesk import timers
from helpdesk.channels.api_channel import signed_headers
from helpdesk.models import Conversation, Message
from tests.factories import AssistantInboxFactory
from tests.support import fake_llm_server as fake
from tests.support.callback_receiver import CallbackReceiver
from tests.support.database import database_url_for_subprocess
from tests.support.servers import start_celery_worker, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

VERDICTS = {
    "thanks": '{"verdict": "resolved", "reason": "The customer said the answer solved it."}',
    "still": '{"verdict": "needs_people", "reason": "The customer is still waiting for the refund."}',
}


def scripted_model(request: dict) -> fake.Step:
    """The judge is told apart by its system prompt; its verdict by what the customer said last."""
    if fake.system_prompt(request).startswith("You review customer support conversations"):
        transcript = request["messages"][1]["content"]
        return fake.text(VERDICTS["thanks"] if "thanks" in transcript else VERDICTS["still"])
    return fake.text("Your refund was sent on Monday.")


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


@pytest.mark.parametrize(
    ("customer_says", "status", "last_text"),
    [
        ("Where is my refund? ok thanks", Conversation.Status.RESOLVED, "resolution"),
        ("Where is my refund? I still see nothing", Conversation.Status.OPEN, "handoff"),
    ],
    ids=["resolved", "needs-people"],
)
def test_quiet_conversation_is_judged_by_the_worker(client, stack, customer_says, status, last_text):
    link = AssistantInboxFactory(inbox__callback_url=stack["receiver"].url)
    assert send(client, link.inbox, "m-1", customer_says).status_code == 200
    receiver, worker = stack["receiver"], stack["worker"]
    wait_for(lambda: receiver.events, timeout=60, what=f"the AI's reply; worker log:\n{worker.log()}")
    conversation = Conversation.objects.get()
    wait_for(
        lambda: Run.objects.filter(conversation=conversation).exists(),
        timeout=30,
        what="the reply run recorded",
    )

    # Forty minutes of quiet (the account's default threshold is 30).
    at = timezone.now() - timedelta(minutes=40)
    Message.objects.filter(conversation=conversation).update(created_at=at)
    Conversation.objects.filter(pk=conversation.pk).update(last_activity_at=at)
    assert timers.auto_resolve_ai_sweep() == 1
    assert timers.auto_resolve_ai_sweep() == 0  # claimed: the next tick does not queue it again

    wait_for(
        lambda: len(receiver.events) >= 2,
        timeout=60,
        what=f"the judgement's message; worker log:\n{worker.log()}",
    )
    expected = {"resolution": link.assistant.resolution_message, "handoff": link.assistant.handoff_message}
    assert receiver.events[1]["json"]["text"] == expected[last_text]
    conversation.refresh_from_db()
    assert conversation.status == status
    judged = Run.objects.filter(conversation=conversation).order_by("id").last()
    assert judged.outcome == (
        Run.Outcome.RESOLVE if status == Conversation.Status.RESOLVED else "human_handoff"
    )
    assert judged.credit_used is False
    assert (
        CreditLedgerEntry.objects.filter(kind=CreditLedgerEntry.Kind.AI_REPLY).count() == 1
    )  # the reply only; the judgement is free
    judge_requests = [
        r for r in stack["model"].requests if fake.system_prompt(r).startswith("You review customer support")
    ]
    assert len(judge_requests) == 1
