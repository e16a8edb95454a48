"""Bursts and ordering with real parts: a burst gets one reply, a message arriving during a run gets its own
run afterwards, one run at a time per conversation while other conversations run in parallel, and the
per-account concurrent-run cap."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from itertools import pairwise

import pytest

from captain.answering.models import ReplyJob, Run
from tests.factories import AssistantInboxFactory
from tests.support import fake_llm_server as fake
from tests.support.servers import wait_for

from .conftest import SECRET, captain_settings, customer_replies, double_charges, post_message, wait_answered

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def user_texts(request: dict) -> list[str]:
    return [m.get("content") or "" for m in request.get("messages", []) if m.get("role") == "user"]


def test_burst_gets_one_reply_and_a_later_message_its_own_run(client, workers):
    first_arrived, release = threading.Event(), threading.Event()

    def responder(request: dict) -> fake.Step:
        if not first_arrived.is_set():
            first_arrived.set()
            release.wait(15)  # the run is "in the model call" until the test has posted the fourth message
            return fake.text("Answer to your three messages.")
        return fake.text("Answer to the fourth.")

    link = AssistantInboxFactory(inbox__secret=SECRET)
    with fake.FakeLLMServer(responder=responder) as model, captain_settings(DEBOUNCE_SECONDS=1.5):
        workers.start(OPENAI_BASE_URL=model.base_url, CAPTAIN_DEBOUNCE_SECONDS="1.5")
        started = time.monotonic()
        for i, word in enumerate(["one", "two", "three"]):
            assert post_message(client, link.inbox, f"b-{i}", f"burst {word}").status_code == 200
            time.sleep(0.1)
        assert first_arrived.wait(30), workers.logs()
        first_call_after = time.monotonic() - started
        assert post_message(client, link.inbox, "b-3", "burst four").status_code == 200
        release.set()
        wait_answered(4, timeout=60, workers=workers)

    runs = Run.objects.count()
    replies = [m.content for m in customer_replies()]
    print(
        f"\nFIGURE debounce: 3 messages 100 ms apart -> runs={runs - 1} model calls=1 (first call after "
        f"{first_call_after:.2f} s); a 4th message during the run -> its own run; replies={replies}"
    )
    assert user_texts(model.requests[0]) == ["burst one", "burst two", "burst three"]  # all three, in order
    assert "burst four" not in " ".join(user_texts(model.requests[0]))
    assert user_texts(model.requests[1])[-1] == "burst four"
    assert len(model.requests) == 2 and runs == 2
    assert replies == ["Answer to your three messages.", "Answer to the fourth."]
    assert double_charges() == 0


def test_one_conversation_serialised_others_parallel(client, workers):
    """20 messages for one conversation and 1 each for 20 others, posted at once, 4 worker processes."""
    intervals: dict[str, list[tuple[float, float]]] = defaultdict(list)
    lock = threading.Lock()

    def responder(request: dict) -> fake.Step:
        conversation = user_texts(request)[-1].split(":")[0]  # "<contact>: message n"
        start = time.monotonic()
        time.sleep(0.4)
        with lock:
            intervals[conversation].append((start, time.monotonic()))
        return fake.text(f"Answer for {conversation}")

    link = AssistantInboxFactory(inbox__secret=SECRET)
    with fake.FakeLLMServer(responder=responder) as model:
        workers.start(OPENAI_BASE_URL=model.base_url, concurrency=4)
        with captain_settings(DEBOUNCE_SECONDS=0.0):
            posts = [("busy", i) for i in range(20)] + [(f"other{i}", 0) for i in range(20)]
            # Interleave so the busy conversation's tasks compete with the others' for the 4 processes.
            posts.sort(key=lambda p: p[1] if p[0] == "busy" else p[1] + 0.5)
            for contact, n in posts:
                response = post_message(
                    client, link.inbox, f"{contact}-{n}", f"{contact}: message {n}", contact=contact
                )
                assert response.status_code == 200
        wait_answered(40, timeout=120, workers=workers)

    busy = sorted(intervals["busy"])
    overlaps_busy = sum(1 for (_, end), (start, _) in pairwise(busy) if start < end)
    others = sorted(iv for key, ivs in intervals.items() if key != "busy" for iv in ivs)
    events = sorted([(s, 1) for s, _ in others] + [(e, -1) for _, e in others])
    running = peak = 0
    for _, step in events:
        running += step
        peak = max(peak, running)
    print(
        f"\nFIGURE ordering: runs on the busy conversation={len(busy)} overlapping={overlaps_busy}; "
        f"other conversations={len(others)} runs, peak parallel={peak} (4 processes)"
    )
    assert overlaps_busy == 0
    assert peak >= 2
    assert ReplyJob.objects.filter(status="pending").count() == 0
    # Every busy-conversation model call saw the messages in the order they were posted.
    for request in model.requests:
        texts = [t for t in user_texts(request) if t.startswith("busy:")]
        numbers = [int(t.rsplit(" ", 1)[1]) for t in texts]
        assert numbers == sorted(numbers)
    assert double_charges() == 0


def test_account_concurrent_run_cap_queues_work(client, workers):
    """Cap 2 with 4 processes: never more than 2 runs of the account at once, and every message answered."""
    active = peak = 0
    lock = threading.Lock()

    def responder(request: dict) -> fake.Step:
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        time.sleep(0.5)
        with lock:
            active -= 1
        return fake.text("Answered.")

    link = AssistantInboxFactory(inbox__secret=SECRET)
    with fake.FakeLLMServer(responder=responder) as model:
        workers.start(
            OPENAI_BASE_URL=model.base_url,
            concurrency=4,
            CAPTAIN_MAX_CONCURRENT_RUNS_PER_ACCOUNT="2",
            CAPTAIN_ACCOUNT_BUSY_RETRY_SECONDS="1",
        )
        with captain_settings(DEBOUNCE_SECONDS=0.0):
            for i in range(8):
                assert (
                    post_message(client, link.inbox, f"cap-{i}", "hello", contact=f"c{i}").status_code == 200
                )
        started = time.monotonic()
        wait_answered(8, timeout=90, workers=workers)
    print(
        f"\nFIGURE account cap: cap=2, 4 processes, 8 conversations -> peak concurrent runs={peak}, "
        f"all answered in {time.monotonic() - started:.1f} s, replies={len(customer_replies())}"
    )
    assert peak <= 2
    assert len(customer_replies()) == 8


def test_a_message_sent_during_a_run_is_answered_right_after_it(client, workers):
    """The second message's own task meets the busy conversation and is put back for LOCK_RETRY_SECONDS (60 s
    here); the run that held the conversation starts the next one as soon as it ends, so the second answer does
    not wait for that put-back task (which then finds its message answered)."""
    first_arrived, release = threading.Event(), threading.Event()

    def responder(request: dict) -> fake.Step:
        if not first_arrived.is_set():
            first_arrived.set()
            release.wait(4)  # the first run is "in the model call" until the second task is put back
            return fake.text("Answer to the first.")
        return fake.text("Answer to the second.")

    link = AssistantInboxFactory(inbox__secret=SECRET)
    with fake.FakeLLMServer(responder=responder) as model, captain_settings(DEBOUNCE_SECONDS=0.0):
        workers.start(OPENAI_BASE_URL=model.base_url, concurrency=2, CAPTAIN_LOCK_RETRY_SECONDS="60")
        assert post_message(client, link.inbox, "n-1", "first question").status_code == 200
        assert first_arrived.wait(30), workers.logs()
        assert post_message(client, link.inbox, "n-2", "second question").status_code == 200
        # The second message's task meets the busy conversation and is put back for a minute (the task logs it).
        try:
            wait_for(
                lambda: "put back for 60.0 s" in workers.logs(), timeout=20, what="the second task put back"
            )
        except TimeoutError as exc:
            raise TimeoutError(f"{exc}\nworker logs:\n{workers.logs()}") from None
        release.set()
        # Far below the 60 s put-back: only the next-batch start can answer it in time.
        wait_answered(2, timeout=30, workers=workers)

    assert [m.content for m in customer_replies()] == ["Answer to the first.", "Answer to the second."]
    assert user_texts(model.requests[1])[-1] == "second question"
    assert Run.objects.count() == 2
    assert double_charges() == 0
