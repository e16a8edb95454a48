"""Concurrency on PostgreSQL, behind barriers: debits never overdraw, duplicate deliveries create nothing twice."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, transaction
from django.test import Client

from captain.answering.models import CreditBalance, CreditLedgerEntry, CreditReservation, ReplyJob, Run
from captain.answering.services.credits import credit_debit
from captain.answering.services.jobs import job_create
from captain.answering.services.runs import run_for_message
from helpdesk.channels.api_channel import signed_headers
from helpdesk.models import Conversation, Message
from tests.factories import AssistantInboxFactory, ConversationFactory, CreditBalanceFactory, MessageFactory
from tests.support.fake_llm_server import text

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
THREADS = 8


def run_behind_barrier(work, items_per_thread: list[list]) -> list:
    barrier = threading.Barrier(len(items_per_thread))

    def worker(items):
        try:
            barrier.wait()
            return [work(item) for item in items]
        finally:
            connection.close()

    with ThreadPoolExecutor(len(items_per_thread)) as pool:
        return [r for chunk in pool.map(worker, items_per_thread) for r in chunk]


def test_concurrent_debits_never_overdraw():
    balance = CreditBalanceFactory(limit=50)
    conversation = ConversationFactory(account=balance.account, contact_inbox__inbox__account=balance.account)
    messages = [
        MessageFactory(conversation=conversation, message_type=Message.Type.OUTGOING, sender_type="assistant")
        for _ in range(THREADS * 25)
    ]

    def debit(message):
        with transaction.atomic():
            return credit_debit(message=message, assistant=None, agent_key="assistant")

    results = run_behind_barrier(debit, [messages[i::THREADS] for i in range(THREADS)])
    charged = sum(results)
    balance.refresh_from_db()
    print(f"\nconcurrent debits: attempted={len(results)} charged={charged} balance_used={balance.used}/50")
    assert charged == min(50, len(results)) == 50
    assert balance.used == 50
    assert CreditLedgerEntry.objects.count() == 50


class RecordingResponder:
    """Stands in for captain at the helpdesk boundary, counting the AI runs that would be enqueued."""

    calls: list[int] = []
    lock = threading.Lock()

    def handles_inbox(self, inbox) -> bool:
        return True

    def message_stored(self, message: Message) -> None:
        """Inside the ingest transaction: the job row, as captain's responder writes it."""
        job_create(message=message)

    def message_received(self, message_id: int) -> None:
        with self.lock:
            self.calls.append(message_id)


recording_responder = RecordingResponder()


@pytest.mark.parametrize("rounds", [100])
def test_same_delivery_posted_concurrently_creates_one_message(settings, rounds):
    settings.HELPDESK = {**settings.HELPDESK, "AI_RESPONDER": f"{__name__}.recording_responder"}
    RecordingResponder.calls.clear()
    inbox = AssistantInboxFactory().inbox
    created = duplicates = errors = 0
    for round_no in range(rounds):
        body = json.dumps(
            {"message_id": f"m-{round_no}", "contact": {"id": f"c-{round_no % 3}"}, "text": "hi"}
        ).encode()
        headers = signed_headers(inbox.secret, body)

        def post(_, body=body, headers=headers):
            response = Client().post(
                f"/webhooks/api/{inbox.webhook_token}/",
                data=body,
                content_type="application/json",
                headers=headers,
            )
            return response.status_code, response.json().get("status")

        for status, outcome in run_behind_barrier(post, [[None] for _ in range(THREADS)]):
            errors += status != 200
            created += outcome == "accepted"
            duplicates += outcome == "duplicate"
    messages = Message.objects.count()
    print(
        f"\nconcurrent duplicates: rounds={rounds} posts={rounds * THREADS} accepted={created} "
        f"duplicate={duplicates} non_200={errors} messages={messages} tasks={len(RecordingResponder.calls)}"
    )
    assert errors == 0
    assert created == rounds and messages == rounds
    assert len(RecordingResponder.calls) == rounds
    assert len(set(RecordingResponder.calls)) == rounds
    assert Conversation.objects.count() == 3  # three contacts, one conversation each


def test_same_delivery_posted_1000_times_sequentially_creates_one_message(settings, client):
    settings.HELPDESK = {**settings.HELPDESK, "AI_RESPONDER": f"{__name__}.recording_responder"}
    RecordingResponder.calls.clear()
    inbox = AssistantInboxFactory().inbox
    body = json.dumps({"message_id": "same", "contact": {"id": "c"}, "text": "hi"}).encode()
    statuses = [
        client.post(
            f"/webhooks/api/{inbox.webhook_token}/",
            data=body,
            content_type="application/json",
            headers=signed_headers(inbox.secret, body),
        ).json()["status"]
        for _ in range(1000)
    ]
    print(
        f"\nsequential duplicates: posts=1000 accepted={statuses.count('accepted')} messages={Message.objects.count()}"
    )
    assert statuses.count("accepted") == 1 and statuses.count("duplicate") == 999
    assert Message.objects.count() == 1 and len(RecordingResponder.calls) == 1


def test_fifty_customers_and_ten_credits_left_call_the_model_ten_times(settings, redis_url, llm_settings):
    """50 runs start together with 10 credits left. Each holds its price before calling the model, so exactly
    10 call it and are charged; the other 40 hand over without a model call. Before holds, runs that all saw
    credits left called the paid model and then failed the debit."""
    settings.CAPTAIN = {**settings.CAPTAIN, "MAX_CONCURRENT_RUNS_PER_ACCOUNT": 0}
    llm_settings.set_responder(lambda request: text("Answered."))
    link = AssistantInboxFactory()
    CreditBalanceFactory(account=link.assistant.account, limit=10)
    messages = [
        MessageFactory(
            conversation=ConversationFactory(contact_inbox__inbox=link.inbox),
            content=f"Question {i}",
            reply_job=ReplyJob.Status.PENDING,
        )
        for i in range(50)
    ]

    outcomes = run_behind_barrier(
        lambda m: run_for_message(message_id=m.id), [messages[i::THREADS] for i in range(THREADS)]
    )

    runs = Run.objects.all()
    print(
        f"\n50 runs, 10 credits: replies={outcomes.count('reply')} handoffs={outcomes.count('human_handoff')} "
        f"model calls={len(llm_settings.requests)} failed debits after a model call="
        f"{runs.filter(detail='Credit limit reached.').count()}"
    )
    assert outcomes.count("reply") == 10 and outcomes.count("human_handoff") == 40
    assert len(llm_settings.requests) == 10
    assert runs.filter(detail="Credit limit reached.").count() == 0
    assert CreditLedgerEntry.objects.count() == 10
    assert CreditBalance.objects.get(account=link.assistant.account).used == 10
    assert not CreditReservation.objects.exists()
