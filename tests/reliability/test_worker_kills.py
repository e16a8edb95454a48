"""Workers killed with SIGKILL (by the PID this test started) at each stage of a run: nothing is lost and
nothing is charged twice. Double replies are counted and reported, not hidden."""

from __future__ import annotations

import contextlib
import threading
import time

import pytest
from django.conf import settings
from django.test import override_settings

from captain.answering.models import ReplyJob, Run
from captain.answering.tasks import pending_messages_sweep
from helpdesk.models import Delivery
from helpdesk.tasks import outbox_sweep
from tests.factories import AssistantInboxFactory
from tests.support import fake_llm_server as fake
from tests.support.servers import wait_for

from .conftest import (
    SECRET,
    HoldingReceiver,
    captain_settings,
    customer_replies,
    double_charges,
    incoming_pending,
    kill_pool_child,
    kill_worker,
    post_message,
    wait_answered,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

LEASE = 3.0
"""Conversation lock lease of the workers in the mid-run kill tests (seconds)."""


class KillOnCall:
    """Model responder that blocks the Nth call until the test has killed the worker making it."""

    def __init__(self, block_call: int, *, first_step: fake.Step | None = None) -> None:
        self.block_call = block_call
        self.first_step = first_step
        self.calls = 0
        self.arrived = threading.Event()
        self.release = threading.Event()
        self.killed = False

    def __call__(self, request: dict) -> fake.Step:
        self.calls += 1
        if not fake.tool_results(request) and self.first_step is not None:
            return self.first_step
        if not self.killed and not self.arrived.is_set() and self.calls >= self.block_call:
            self.arrived.set()
            self.release.wait(20)
            return fake.text("never received: the worker is dead")
        return fake.text("Your order ships tomorrow.")


def report(stage: str, started: float) -> dict[str, int]:
    figures = {
        "lost": incoming_pending(),
        "double_charges": double_charges(),
        "replies": len(customer_replies()),
        "runs": Run.objects.count(),
    }
    print(f"\nFIGURE kill {stage}: {figures} recovered in {time.monotonic() - started:.1f} s")
    return figures


@pytest.mark.parametrize(
    ("stage", "responder"),
    [
        ("during the model call", lambda: KillOnCall(1)),
        # The first call answered a tool call (the run is past a model call); the kill lands before the outcome
        # is committed, while the run waits on its second call.
        (
            "after a model call, before the outcome commit",
            lambda: KillOnCall(2, first_step=fake.tool_call("faq_lookup", {"query": "ship"})),
        ),
    ],
)
def test_pool_process_killed_mid_run(client, workers, redis_url, stage, responder):
    """Prefork: the pool process running the task dies; `reject_on_worker_lost` requeues the task at once,
    the new run waits for the dead run's conversation lock to expire, and answers once."""
    scripted = responder()
    with (
        fake.FakeLLMServer(responder=scripted) as model,
        HoldingReceiver() as receiver,
        captain_settings(DEBOUNCE_SECONDS=0.0),
    ):
        link = AssistantInboxFactory(inbox__secret=SECRET, inbox__callback_url=receiver.url)
        # The dead run's conversation lock lapses with its lease (not renewed by a dead process): 3 s here.
        worker = workers.start(OPENAI_BASE_URL=model.base_url, CAPTAIN_LOCK_LEASE_SECONDS=str(LEASE))
        assert post_message(client, link.inbox, "k-1", "When does my order ship?").status_code == 200
        assert scripted.arrived.wait(30), workers.logs()
        kill_pool_child(worker)
        scripted.killed = True
        scripted.release.set()
        started = time.monotonic()
        wait_answered(1, timeout=60, workers=workers)
        recovered = time.monotonic() - started
        wait_for(lambda: Delivery.objects.filter(status="sent").exists(), timeout=30)
    figures = report(stage, started)
    assert figures == {"lost": 0, "double_charges": 0, "replies": 1, "runs": 1}
    # Answered once the lease lapsed plus a lock retry or two, not after the task's hard time limit.
    assert recovered < LEASE + 20
    assert ReplyJob.objects.get(message__message_type="incoming").attempts == 2
    assert [m.content for m in customer_replies()] == ["Your order ships tomorrow."]
    assert [e["json"]["text"] for e in receiver.events] == ["Your order ships tomorrow."]


def test_worker_killed_before_the_model_call_sweeper_recovers(client, workers):
    """The whole worker dies while holding the task (received, waiting out its debounce countdown): the task
    is unacked in Redis until the visibility timeout; the sweeper re-enqueues the message long before."""
    link = AssistantInboxFactory(inbox__secret=SECRET)
    with (
        fake.FakeLLMServer(responder=lambda request: fake.text("Hello again.")) as model,
        HoldingReceiver() as receiver,
    ):
        link.inbox.callback_url = receiver.url
        link.inbox.save()
        worker = workers.start(OPENAI_BASE_URL=model.base_url, CAPTAIN_DEBOUNCE_SECONDS="0")
        with captain_settings(DEBOUNCE_SECONDS=3.0):
            assert post_message(client, link.inbox, "k-2", "Hi").status_code == 200
        wait_for(lambda: "reply_generate[" in worker.log(), timeout=20, what="the worker to receive the task")
        kill_worker(worker)
        started = time.monotonic()
        assert len(model.requests) == 0
        workers.start(OPENAI_BASE_URL=model.base_url)
        # Sweep with a threshold of 1 s (production: SWEEP_AFTER_SECONDS, longer than the hard time limit).
        time.sleep(1.1)
        with captain_settings(SWEEP_AFTER_SECONDS=1, DEBOUNCE_MAX_SECONDS=0.0):
            assert pending_messages_sweep() == 1
            assert pending_messages_sweep() == 0  # claimed once: a second sweep in the period takes nothing
        wait_answered(1, timeout=60, workers=workers)
    figures = report("before the model call (whole worker)", started)
    assert figures == {"lost": 0, "double_charges": 0, "replies": 1, "runs": 1}


def test_worker_killed_after_commit_before_delivery(client, workers):
    """Reply committed and charged, the worker dies before delivering it: a delivery worker started later
    sends it exactly once."""
    link = AssistantInboxFactory(inbox__secret=SECRET)
    with (
        fake.FakeLLMServer(responder=lambda request: fake.text("Delivered later.")) as model,
        HoldingReceiver() as receiver,
        captain_settings(DEBOUNCE_SECONDS=0.0),
    ):
        link.inbox.callback_url = receiver.url
        link.inbox.save()
        ai_worker = workers.start(OPENAI_BASE_URL=model.base_url, queues="captain")
        assert post_message(client, link.inbox, "k-3", "Hi").status_code == 200
        wait_for(lambda: Run.objects.exists(), timeout=30, what="the committed reply")
        kill_worker(ai_worker)
        started = time.monotonic()
        assert receiver.events == []
        workers.start(OPENAI_BASE_URL=model.base_url, queues="helpdesk")
        with contextlib.suppress(TimeoutError):
            wait_for(lambda: Delivery.objects.filter(status="sent").exists(), timeout=20)
        unpublished = Delivery.objects.filter(status="queued", enqueued_at__isnull=True).count()
        # The kill may land between the reply's commit and the publish of its delivery task; the outbox sweep
        # (Celery beat in production) publishes such rows. Run it with no grace period.
        with override_settings(HELPDESK={**settings.HELPDESK, "OUTBOX_UNPUBLISHED_AFTER_SECONDS": 0}):
            swept = outbox_sweep()
        print(f"FIGURE kill after commit, before delivery: unpublished rows={unpublished} swept={swept}")
        wait_for(lambda: Delivery.objects.filter(status="sent").exists(), timeout=20, what="delivery")
        time.sleep(1)
    figures = report("after commit, before delivery", started)
    delivery = Delivery.objects.get(message=customer_replies()[0])
    print(
        f"FIGURE kill after commit, before delivery: deliveries received={len(receiver.events)} "
        f"reply delivery status={delivery.status} attempts={delivery.attempts}"
    )
    assert figures == {"lost": 0, "double_charges": 0, "replies": 1, "runs": 1}
    assert len(receiver.events) == 1
    assert delivery.status == "sent"


def test_worker_killed_while_delivering_sent_but_not_acked(client, workers):
    """The channel received the reply but the worker died before recording it. Reported honestly: whether
    the customer gets it twice depends on the delivery task's redelivery policy (helpdesk.tasks)."""
    link = AssistantInboxFactory(inbox__secret=SECRET)
    with (
        fake.FakeLLMServer(responder=lambda request: fake.text("Sent once?")) as model,
        HoldingReceiver() as receiver,
        captain_settings(DEBOUNCE_SECONDS=0.0),
    ):
        receiver.hold = True
        link.inbox.callback_url = receiver.url
        link.inbox.save()
        worker = workers.start(OPENAI_BASE_URL=model.base_url)
        assert post_message(client, link.inbox, "k-4", "Hi").status_code == 200
        assert receiver.arrived.wait(30), workers.logs()
        kill_pool_child(worker)
        receiver.release.set()
        started = time.monotonic()
        time.sleep(8)  # room for a redelivery, if any
        delivery = Delivery.objects.get(message=customer_replies()[0])
    figures = report("sent but not acked", started)
    print(
        f"FIGURE kill sent-but-not-acked: deliveries received by the customer={len(receiver.events)} "
        f"(double replies={max(0, len(receiver.events) - 1)}), reply delivery status={delivery.status}"
    )
    assert figures["lost"] == 0 and figures["double_charges"] == 0 and figures["runs"] == 1
    assert len(receiver.events) >= 1
