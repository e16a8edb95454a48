"""The customer lane on gevent's pool: one worker process holds many runs in flight while they wait on the model
(greenlets instead of a thread each; psycopg 3 and redis-py yield to other runs on their sockets), and every
message is still answered once and charged once (docs/deploy.md, "Runs in flight")."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from captain.answering.models import Run
from tests.factories import AssistantInboxFactory
from tests.support import fake_llm_server as fake

from .conftest import SECRET, captain_settings, customer_replies, double_charges, post_message, wait_answered

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

CONVERSATIONS = 24
"""More runs than a threads pool of 16 (the embedded default's order of size) could hold at once."""


class InFlight:
    """The scripted model holds every call until `target` calls are waiting at once (or 20 s pass), so the peak
    it records is how many runs the worker had in flight together."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.now = self.peak = 0
        self.cond = threading.Condition()

    def __call__(self, request: dict) -> fake.Step:
        with self.cond:
            self.now += 1
            self.peak = max(self.peak, self.now)
            self.cond.notify_all()
            self.cond.wait_for(lambda: self.peak >= self.target, timeout=20)
            self.now -= 1
        return fake.text("Answered.")


def test_one_gevent_worker_holds_every_run_in_flight(client, workers):
    if connection.vendor != "postgresql":
        # The product runs gevent's pool on PostgreSQL only (scripts/supervisor.py, docs/deploy.md): a SQLite call
        # holds the whole process, so one greenlet waiting on a write lock stalls every other run for up to the
        # lock timeout. CI's PostgreSQL pass runs this test.
        pytest.skip("gevent's pool is for PostgreSQL; SQLite calls block every greenlet")
    model_calls = InFlight(target=CONVERSATIONS)
    link = AssistantInboxFactory(inbox__secret=SECRET)
    with fake.FakeLLMServer(responder=model_calls) as model, captain_settings(DEBOUNCE_SECONDS=0.0):
        workers.start(
            OPENAI_BASE_URL=model.base_url,
            pool="gevent",
            concurrency=64,
            CAPTAIN_LLM_TIMEOUT="30",
            # All conversations are one account's: its concurrent-run cap would measure itself.
            CAPTAIN_MAX_CONCURRENT_RUNS_PER_ACCOUNT="0",
        )
        for i in range(CONVERSATIONS):
            response = post_message(client, link.inbox, f"g-{i}", f"question {i}", contact=f"c{i}")
            assert response.status_code == 200
        wait_answered(CONVERSATIONS, timeout=90, workers=workers)

    print(
        f"\nFIGURE gevent pool: {CONVERSATIONS} conversations, one worker process -> {model_calls.peak} model calls in flight at once"
    )
    assert model_calls.peak == CONVERSATIONS
    assert Run.objects.filter(outcome=Run.Outcome.REPLY).count() == CONVERSATIONS
    assert [m.content for m in customer_replies()] == ["Answered."] * CONVERSATIONS
    assert double_charges() == 0
