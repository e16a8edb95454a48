"""The model gate across processes, on a real redis-server: a background call waits while a customer call waits,
a slot is kept for customers, a killed holder's slot lapses, and an unreachable Redis never stops a reply."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from typing import Any

import pytest
import redis

from captain import lanes
from captain.model_gate import (
    COMING_KEY,
    CUSTOMER_GRACE_MS,
    GateSettings,
    RedisModelGate,
    customer_coming,
    gate_redis,
)
from captain.runtime import ModelError, OpenAIChatModel, make_openai_client
from tests.support.fake_llm_server import FakeLLMServer, text

CTX = multiprocessing.get_context("fork")


def _gate(url: str, key: str, **overrides: Any) -> RedisModelGate:
    config = {"slots": 1, "customer_slots": 0, "lease_seconds": 30.0, "max_wait_seconds": 20.0, **overrides}
    # Each test's own "customer coming" key too: tests in other processes share the redis-server.
    return RedisModelGate(key, GateSettings(**config), gate_redis(url), coming_key=f"{key}:coming")


def _call(url: str, key: str, lane: str, hold: float, events: Any, name: str, overrides: dict) -> None:
    """One model call in its own process: wait for the gate, hold the slot `hold` seconds, release."""
    lanes.enter(lane)  # type: ignore[arg-type]
    with _gate(url, key, **overrides).slot():
        events.put((name, "in", time.monotonic()))
        time.sleep(hold)
        events.put((name, "out", time.monotonic()))


def _start(url, key, lane, hold, events, name, **overrides) -> multiprocessing.Process:
    proc = CTX.Process(target=_call, args=(url, key, lane, hold, events, name, overrides))
    proc.start()
    return proc


def _timeline(events, count: int) -> dict[tuple[str, str], float]:
    return {(name, what): at for name, what, at in (events.get(timeout=30) for _ in range(count))}


def test_a_background_call_waits_while_a_customer_call_is_waiting(redis_server):
    events = CTX.Queue()
    key = f"order-{os.getpid()}-{time.monotonic()}"
    holder = _start(redis_server.url, key, "customer", 1.0, events, "holder")
    time.sleep(0.3)  # the holder has the one slot
    background = _start(redis_server.url, key, "background", 0.2, events, "background")
    time.sleep(0.2)  # the background call is waiting first ...
    customer = _start(redis_server.url, key, "customer", 0.2, events, "customer")  # ... then a customer
    for proc in (holder, background, customer):
        proc.join(timeout=30)
        assert proc.exitcode == 0
    t = _timeline(events, 6)
    # The customer, though it came later, has the slot next; the background call only after it is done.
    assert t[("holder", "out")] <= t[("customer", "in")] < t[("background", "in")]
    assert t[("background", "in")] >= t[("customer", "out")]


def test_a_slot_is_kept_for_customers(redis_server):
    events = CTX.Queue()
    key = f"reserve-{os.getpid()}-{time.monotonic()}"
    two_slots = {"slots": 2, "customer_slots": 1}
    first = _start(redis_server.url, key, "background", 1.5, events, "bg1", **two_slots)
    time.sleep(0.3)
    second = _start(redis_server.url, key, "background", 0.1, events, "bg2", **two_slots)
    time.sleep(0.2)
    started = time.monotonic()
    customer = _start(redis_server.url, key, "customer", 0.1, events, "customer", **two_slots)
    for proc in (first, second, customer):
        proc.join(timeout=30)
        assert proc.exitcode == 0
    t = _timeline(events, 6)
    # The customer walked into the kept slot while the second background call had to wait for the first.
    assert t[("customer", "in")] - started < 0.5
    assert t[("bg2", "in")] >= t[("bg1", "out")]


def test_on_a_cpu_bound_model_a_background_call_waits_for_a_running_customer_call(redis_server):
    events = CTX.Queue()
    key = f"alone-{os.getpid()}-{time.monotonic()}"
    cpu_bound = {"slots": 2, "customer_slots": 1, "background_alone": True}
    customer = _start(redis_server.url, key, "customer", 1.0, events, "customer", **cpu_bound)
    time.sleep(0.3)  # the customer call runs; a slot is free, but sharing the cores would slow the customer
    background = _start(redis_server.url, key, "background", 0.1, events, "background", **cpu_bound)
    for proc in (customer, background):
        proc.join(timeout=30)
        assert proc.exitcode == 0
    t = _timeline(events, 4)
    assert t[("background", "in")] >= t[("customer", "out")]


def test_on_a_cpu_bound_model_a_background_call_does_not_slip_in_between_a_replys_calls(redis_server):
    key = f"between-{os.getpid()}-{time.monotonic()}"
    cpu_bound = {"slots": 2, "customer_slots": 1, "background_alone": True}
    with _gate(
        redis_server.url, key, **cpu_bound
    ).slot():  # a reply's first call (this process: customer lane)
        pass
    token = lanes.enter(lanes.BACKGROUND)
    try:
        started = time.monotonic()
        with _gate(redis_server.url, key, **cpu_bound).slot():
            waited = time.monotonic() - started
    finally:
        lanes.leave(token)
    # It waited out the grace after the customer call, in which the reply's next call would have started.
    assert waited >= CUSTOMER_GRACE_MS / 1000 - 0.2


def test_on_a_cpu_bound_model_a_stored_customer_message_holds_background_calls_until_its_reply_starts(
    redis_server, settings
):
    settings.CAPTAIN = {**settings.CAPTAIN, "LANES": True, "MODEL_GATE_BACKGROUND_ALONE": True}
    events = CTX.Queue()
    key = f"coming-{os.getpid()}-{time.monotonic()}"
    cpu_bound = {"slots": 2, "customer_slots": 1, "background_alone": True}
    # The web process stored a message; its reply starts after a 0.5 s debounce. No model call is running.
    customer_coming(token="message:1", seconds=0.5, client=gate_redis(redis_server.url), key=f"{key}:coming")
    held_until = time.monotonic() + 0.5 + CUSTOMER_GRACE_MS / 1000
    background = _start(redis_server.url, key, "background", 0.1, events, "background", **cpu_bound)
    time.sleep(0.2)
    customer = _start(redis_server.url, key, "customer", 0.1, events, "customer", **cpu_bound)
    for proc in (background, customer):
        proc.join(timeout=30)
        assert proc.exitcode == 0
    t = _timeline(events, 4)
    # The customer's own call is not held; the background call waited for the message's hold to lapse.
    assert t[("customer", "in")] < t[("background", "in")]
    assert t[("background", "in")] >= held_until - 0.3


def test_on_a_hosted_model_a_stored_customer_message_holds_nothing(redis_server, settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "LANES": True, "MODEL_GATE_BACKGROUND_ALONE": False}
    client = gate_redis(redis_server.url)
    key = f"hosted-coming-{os.getpid()}-{time.monotonic()}"
    customer_coming(token="message:1", seconds=1.5, client=client, key=key)
    assert client.exists(key) == 0


@pytest.mark.django_db
def test_the_web_process_holds_background_calls_for_each_customer_message_it_passes_on(redis_url, settings):
    from captain.answering.models import ReplyJob
    from captain.integration import CaptainResponder
    from tests.factories import MessageFactory

    settings.CAPTAIN = {
        **settings.CAPTAIN,
        "LANES": True,
        "MODEL_GATE_BACKGROUND_ALONE": True,
        "DEBOUNCE_SECONDS": 1.5,
    }
    message = MessageFactory(content="hello", reply_job=ReplyJob.Status.PENDING)
    client = redis.Redis.from_url(redis_url)
    CaptainResponder().message_received(message.id)
    server_ms = int(client.time()[0]) * 1000
    lapses_at = client.zscore(COMING_KEY, f"message:{message.id}")
    assert lapses_at is not None
    # The debounce and the grace in which the reply's first call begins.
    assert 1500 + CUSTOMER_GRACE_MS - 1000 <= lapses_at - server_ms <= 1500 + CUSTOMER_GRACE_MS + 1000


def test_on_a_hosted_model_a_background_call_takes_the_free_slot_beside_a_customer(redis_server):
    events = CTX.Queue()
    key = f"beside-{os.getpid()}-{time.monotonic()}"
    hosted = {"slots": 3, "customer_slots": 1}
    customer = _start(redis_server.url, key, "customer", 1.0, events, "customer", **hosted)
    time.sleep(0.3)
    background = _start(redis_server.url, key, "background", 0.1, events, "background", **hosted)
    for proc in (customer, background):
        proc.join(timeout=30)
        assert proc.exitcode == 0
    t = _timeline(events, 4)
    assert t[("background", "out")] < t[("customer", "out")]


def test_a_killed_holder_loses_its_slot_when_its_lease_lapses(redis_server):
    events = CTX.Queue()
    key = f"lease-{os.getpid()}-{time.monotonic()}"
    short_lease = {"lease_seconds": 1.0}
    holder = _start(redis_server.url, key, "customer", 60, events, "holder", **short_lease)
    assert events.get(timeout=10)[:2] == ("holder", "in")
    os.kill(holder.pid, signal.SIGKILL)
    holder.join(timeout=10)
    started = time.monotonic()
    with _gate(redis_server.url, key, **short_lease).slot():
        waited = time.monotonic() - started
    assert 0.3 < waited < 3.0


def test_a_background_call_that_waits_too_long_fails_as_a_model_timeout(redis_server):
    key = f"timeout-{os.getpid()}-{time.monotonic()}"
    with _gate(redis_server.url, key).slot():  # a customer (this process, outside any task) holds the slot
        token = lanes.enter(lanes.BACKGROUND)
        try:
            with (
                pytest.raises(ModelError) as failure,
                _gate(redis_server.url, key, max_wait_seconds=0.3).slot(),
            ):
                pass
        finally:
            lanes.leave(token)
    assert failure.value.kind == "timeout"


def test_an_unreachable_redis_lets_the_call_through():
    dead = RedisModelGate(
        "dead",
        GateSettings(slots=1, customer_slots=0, lease_seconds=5, max_wait_seconds=5),
        gate_redis("redis://127.0.0.1:1/0"),
    )
    started = time.monotonic()
    with dead.slot() as waited_ms:
        assert waited_ms < 1000
    assert time.monotonic() - started < 1.0


def test_a_model_call_holds_a_slot_for_as_long_as_it_talks_to_the_model(redis_server):
    """Real HTTP to a scripted model server: while the call is in flight its slot is held; afterwards free."""
    gate = _gate(redis_server.url, f"http-{os.getpid()}-{time.monotonic()}")
    held_during_call: list[int] = []
    client = redis.Redis.from_url(redis_server.url)

    def reply(_request: dict) -> Any:
        held_during_call.append(client.zcard(gate.keys[0]))
        return text("Hello!")

    with FakeLLMServer(responder=reply) as server:
        model = OpenAIChatModel(make_openai_client(server.base_url, None, 5, 0), gate=gate)
        response = model.complete(model="scripted", messages=[{"role": "user", "content": "hi"}])
    assert response.content == "Hello!"
    assert held_during_call == [1]
    assert client.zcard(gate.keys[0]) == 0
