"""`scripts/run` says the helpdesk is ready only once the start-up prompt warm-up is over: the warm-up leaves a
marker in Redis when it has sent every prefix, and the supervisor waits for a marker newer than the workers'
start (a real redis-server; the scripted model server of the other warm-up tests)."""

from __future__ import annotations

import importlib.util
import io
import json
import sys
import threading
import time

import pytest
import redis

from captain.answering.services.warmup import WARMED_KEY, prompt_prefixes_warm
from tests.factories import AssistantInboxFactory, ScenarioFactory
from tests.support.fake_llm_server import text
from tests.support.servers import ROOT

spec = importlib.util.spec_from_file_location("supervisor_for_warm_up", ROOT / "scripts" / "supervisor.py")
assert spec is not None and spec.loader is not None
supervisor = importlib.util.module_from_spec(spec)
sys.modules["supervisor_for_warm_up"] = supervisor
spec.loader.exec_module(supervisor)


@pytest.mark.django_db
def test_the_start_up_warm_up_leaves_a_marker_when_every_prefix_was_sent(redis_url, llm_settings):
    link = AssistantInboxFactory(assistant__name="Ava")
    ScenarioFactory(assistant=link.assistant, key="refunds", title="Refunds", description="Refund requests")
    client = redis.Redis.from_url(redis_url)
    before = time.time()

    llm_settings.push(text("."), text("."))
    assert prompt_prefixes_warm(limit=4) == 2
    marker = json.loads(client.get(WARMED_KEY))
    assert marker["warmed"] == 2 and marker["at"] >= before
    # The same key the supervisor reads (scripts/ cannot import the product).
    assert supervisor.PROMPT_WARMED_KEY == WARMED_KEY

    # The warm-up of one assistant after a builder's edit is not the start-up one: it leaves the marker alone.
    client.delete(WARMED_KEY)
    llm_settings.push(text("."), text("."))
    assert prompt_prefixes_warm(limit=4, assistant_id=link.assistant.pk) == 2
    assert client.get(WARMED_KEY) is None


def make() -> tuple[supervisor.Supervisor, io.StringIO]:
    out = io.StringIO()
    return supervisor.Supervisor(out=out, max_crashes=3, stable_seconds=5.0), out


def test_the_supervisor_waits_for_a_warm_up_that_finishes_after_the_workers_started(redis_url):
    client = redis.Redis.from_url(redis_url)
    since = time.time()
    # A marker left by an earlier run (Redis keeps its data in var/) is not this run's warm-up.
    client.set(WARMED_KEY, json.dumps({"at": since - 60, "warmed": 5}))
    timer = threading.Timer(1.0, lambda: client.set(WARMED_KEY, json.dumps({"at": time.time(), "warmed": 5})))
    timer.start()
    sup, out = make()
    started = time.monotonic()
    try:
        assert supervisor.wait_for_prompt_warm_up(sup, {"REDIS_URL": redis_url}, since, timeout=20) is True
    finally:
        timer.cancel()
    assert time.monotonic() - started >= 0.9  # it did not take the stale marker
    assert "prompt warm-up done (5 prompt prefixes" in out.getvalue()


def test_the_supervisor_stops_waiting_for_a_warm_up_that_never_ends_and_says_so(redis_url):
    sup, out = make()
    started = time.monotonic()
    assert (
        supervisor.wait_for_prompt_warm_up(sup, {"REDIS_URL": redis_url}, time.time(), timeout=1.0) is False
    )
    assert 0.9 <= time.monotonic() - started < 5
    assert "prompt warm-up not finished after 1 s" in out.getvalue()
    # Warming turned off: nothing to wait for.
    env = {"REDIS_URL": redis_url, "CAPTAIN_PROMPT_WARM_ASSISTANTS": "0"}
    assert supervisor.wait_for_prompt_warm_up(sup, env, time.time(), timeout=30) is False
