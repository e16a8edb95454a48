"""Follow-up suggestions with real parts: a customer message in through the webhook, the reply from the customer
lane's Celery worker, the suggestions from the background lane's worker (two worker processes, as `scripts/run`
starts them), a scripted model over HTTP that HOLDS the suggestions' call until the customer's callback has the
reply, and both messages POSTed to that callback. Nothing is mocked."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from captain.answering.models import CreditLedgerEntry, Run
from helpdesk.channels.api_channel import signed_headers
from helpdesk.models import Message
from tests.factories import AssistantInboxFactory
from tests.support import fake_llm_server as fake
from tests.support.callback_receiver import CallbackReceiver
from tests.support.database import database_url_for_subprocess
from tests.support.servers import start_celery_worker, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

REPLY = "Refunds reach your card within 5 working days."
QUESTIONS = ["Can I get the refund on another card?", "How do I track my refund?"]


class HoldingModel:
    """Answers the team at once; holds the suggestions' call until the customer's callback got the reply (at
    most `HOLD_SECONDS`: a reply that waited for this call would never arrive within it)."""

    HOLD_SECONDS = 30.0

    def __init__(self, receiver: CallbackReceiver) -> None:
        self.receiver = receiver
        self.released = threading.Event()

    def _reply_delivered(self) -> bool:
        return any(e["json"].get("text") == REPLY for e in list(self.receiver.events))

    def __call__(self, request: dict) -> fake.Step:
        response_format = request.get("response_format") or {}
        if response_format.get("json_schema", {}).get("name") != "follow_up_questions":
            return fake.text(REPLY, prompt_tokens=300, completion_tokens=14)
        wait_for(
            self._reply_delivered, timeout=self.HOLD_SECONDS, what="the reply at the customer's callback"
        )
        self.released.set()
        return fake.text(json.dumps({"suggestions": QUESTIONS}), prompt_tokens=120, completion_tokens=20)


@pytest.fixture
def stack(redis_url, tmp_path: Path):
    with CallbackReceiver() as receiver:
        holding = HoldingModel(receiver)
        with fake.FakeLLMServer(responder=holding) as model:
            env = {
                "DATABASE_URL": database_url_for_subprocess(),
                "REDIS_URL": redis_url,
                "OPENAI_BASE_URL": model.base_url,
                "OPENAI_API_KEY": "test",
                "CAPTAIN_LLM_TIMEOUT": "60",
                "CAPTAIN_LLM_MAX_RETRIES": "0",
                "CAPTAIN_DEBOUNCE_SECONDS": "0",
            }
            workers = [
                start_celery_worker(
                    env=env, log_path=tmp_path / "customer.log", queues="helpdesk,captain", pool="threads"
                ),
                start_celery_worker(
                    env=env, log_path=tmp_path / "background.log", queues="captain_background", pool="threads"
                ),
            ]
            try:
                yield {"model": model, "holding": holding, "receiver": receiver, "workers": workers}
            finally:
                for worker in workers:
                    worker.stop()


def logs(stack) -> str:
    return "\n".join(worker.log()[-3000:] for worker in stack["workers"])


def test_the_reply_reaches_the_customer_before_the_suggestions_call_is_answered(client, stack):
    receiver, holding = stack["receiver"], stack["holding"]
    link = AssistantInboxFactory(
        assistant__suggestions_enabled=True,
        assistant__instructions="Refunds reach the customer's card within 5 working days.",
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
    response = client.post(
        f"/webhooks/api/{link.inbox.webhook_token}/",
        data=body,
        content_type="application/json",
        headers=signed_headers("api-secret", body),
    )
    assert response.status_code == 200

    wait_for(lambda: len(receiver.events) >= 2, timeout=90, what=f"reply and follow-up; logs:\n{logs(stack)}")
    first, second = receiver.events[:2]
    assert first["json"]["text"] == REPLY
    assert "suggestions" not in first["json"]
    assert holding.released.is_set()  # the held call was answered only once the reply had arrived
    assert second["json"]["text"] == "You can also ask:"
    assert second["json"]["suggestions"] == QUESTIONS
    assert len(receiver.events) == 2
    reply, follow_up = Message.objects.filter(message_type=Message.Type.OUTGOING).order_by("id")
    assert (reply.quick_replies, follow_up.quick_replies) == ([], QUESTIONS)
    assert list(CreditLedgerEntry.objects.values_list("message_id", flat=True)) == [reply.id]
    run = Run.objects.get()
    assert (run.llm_calls, run.input_tokens, run.output_tokens) == (2, 420, 34)
