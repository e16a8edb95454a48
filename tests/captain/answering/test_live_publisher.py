"""The live publisher on a real redis-server: a run's thoughts and events reach the scope's channel in order,
in the documented format, and a dead Redis neither breaks nor slows the run."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import pytest
import redis
from opentelemetry.sdk.trace import TracerProvider

from captain.answering.services import live
from captain.answering.services.live import LivePublisher, live_channel, live_end
from captain.runtime import Agent, RunContext, RunEvent, Runner
from captain.runtime.hooks import FanOutHooks
from captain.runtime.tracing import TracingHooks
from tests.captain.runtime.test_planning import Shop, _agent
from tests.captain.runtime.test_runner import ScriptedModel, calls
from tests.support.servers import start_redis, wait_for

AGENT = Agent(key="orders", name="Orders", instructions="", model="m")
CONTEXT = RunContext(account_id=1, conversation_id=None)


@pytest.fixture
def live_redis(redis_url, settings):
    settings.REDIS_URL = redis_url
    live._client.cache_clear()
    live._subscriber_client.cache_clear()
    yield redis_url
    live._client.cache_clear()
    live._subscriber_client.cache_clear()


class Listener:
    """A plain redis-py subscriber on the scope's channel, as any watcher would be."""

    def __init__(self, url: str, scope: str) -> None:
        self.pubsub = redis.Redis.from_url(url).pubsub(ignore_subscribe_messages=True)
        self.pubsub.subscribe(live_channel(scope))
        self.messages: list[dict[str, Any]] = []

    def until_end(self, timeout: float = 5) -> list[dict[str, Any]]:
        def ended() -> bool:
            raw = self.pubsub.get_message(timeout=0.05)
            if raw and raw["type"] == "message":
                self.messages.append(json.loads(raw["data"]))
            return bool(self.messages) and self.messages[-1]["type"] == "end"

        wait_for(ended, timeout=timeout, interval=0, what="the end message")
        self.pubsub.close()
        return self.messages


def test_thoughts_and_events_arrive_in_order_in_the_documented_format(live_redis):
    listener = Listener(live_redis, "playground:7")
    publisher = LivePublisher("playground:7", secrets=())
    publisher.on_thought(CONTEXT, AGENT, "Looking ")
    publisher.on_thought(CONTEXT, AGENT, "up the order.")
    plan = {"goal": "", "steps": [{"text": "Look up", "done": True}], "status": "active", "waiting_for": ""}
    publisher.on_event(CONTEXT, AGENT, RunEvent("plan", "orders", name="update_plan", data={"plan": plan}))
    publisher.on_event(CONTEXT, AGENT, RunEvent("tool_call", "orders", name="get_order", detail="x" * 5000))
    live_end("playground:7")

    messages = listener.until_end()
    assert [m["type"] for m in messages] == ["thought", "thought", "event", "event", "end"]
    assert [m["text"] for m in messages[:2]] == ["Looking ", "up the order."]
    assert all(m["agent"] == "orders" for m in messages[:4])
    assert messages[2]["event"] == {
        "type": "plan",
        "name": "update_plan",
        "detail": "",
        "data": {"plan": plan},
    }
    assert len(messages[3]["event"]["detail"]) == live.MAX_TEXT_CHARS  # bounded
    times = [m["at"] for m in messages]
    assert times == sorted(times) and abs(times[-1] - time.time()) < 30
    assert not publisher.broken


def test_large_event_data_is_sent_small(live_redis):
    listener = Listener(live_redis, "conversation:3")
    publisher = LivePublisher("conversation:3", secrets=())
    publisher.on_event(CONTEXT, AGENT, RunEvent("tool_call", "orders", data={"result": "y" * 50_000}))
    live_end("conversation:3")
    event = listener.until_end()[0]["event"]
    assert len(json.dumps(event["data"])) <= live.MAX_DATA_CHARS
    assert event["data"]["result"].startswith("yyy")


def test_a_real_run_streams_its_thought_and_plan_states(live_redis):
    """A planning run through FanOutHooks(tracing, live): the watcher sees the plan change and the thought."""
    listener = Listener(live_redis, "conversation:42")
    model = ScriptedModel(
        calls(("update_plan", {"steps": ["Look up order 1042", "Tell the status"], "next": "look up"})),
        calls(("get_order", {"order_id": "1042"})),
        calls(("update_plan", {"done": [1], "next": "tell the status"})),
        calls(("think", {"thought": "Delivered, paid 20."})),
        calls(("final_answer", {"answer": "Your order 1042 was delivered."})),
    )
    agent = _agent(Shop())
    hooks = FanOutHooks(TracingHooks(), LivePublisher("conversation:42", secrets=()))
    Runner(model, hooks=hooks, tracer_provider=TracerProvider()).run(
        agents={agent.key: agent},
        start_key=agent.key,
        messages=[{"role": "user", "content": "where is order 1042?"}],
        context=RunContext(account_id=1, conversation_id=42),
    )
    live_end("conversation:42")
    messages = listener.until_end()
    thoughts = [m["text"] for m in messages if m["type"] == "thought"]
    assert thoughts == ["Delivered, paid 20."]
    plans = [
        m["event"]["data"]["plan"] for m in messages if m["type"] == "event" and m["event"]["type"] == "plan"
    ]
    assert plans and plans[-1]["steps"][0] == {"text": "Look up order 1042", "done": True}
    kinds = [m["event"]["type"] for m in messages if m["type"] == "event"]
    assert kinds.index("plan") < kinds.index("tool_call")  # in the order they happened
    # The customer's answer is not a thought: it never appears among them.
    assert not any("Your order 1042 was delivered." in t for t in thoughts)


def test_a_dead_redis_neither_breaks_nor_slows_the_run(settings, caplog):
    server = start_redis()
    url = server.url
    server.stop()  # nothing listens on that port any more
    settings.REDIS_URL = url
    live._client.cache_clear()
    try:
        publisher = LivePublisher("playground:9", secrets=())
        started = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="captain.answering.services.live"):
            for n in range(200):
                publisher.on_thought(CONTEXT, AGENT, f"piece {n} ")
                publisher.on_event(CONTEXT, AGENT, RunEvent("tool_call", "orders", name="get_order"))
            live_end("playground:9")  # best effort too
        elapsed = time.monotonic() - started
    finally:
        live._client.cache_clear()
    assert publisher.broken
    assert elapsed < 2.0  # one failed connection at most, then nothing is tried for this run
    warnings = [r for r in caplog.records if r.name == "captain.answering.services.live"]
    assert len([r for r in warnings if "live updates" in r.getMessage()]) == 1


@pytest.mark.django_db
def test_a_playground_turn_publishes_its_events_then_end(live_redis, llm_settings):
    """The worker's side of the playground: the same runner_for as production, with the turn's scope."""
    from captain.playground.models import PlaygroundRun
    from captain.playground.services.playground import playground_turn_run
    from tests.factories import AssistantFactory
    from tests.support.fake_llm_server import text

    assistant = AssistantFactory()
    run = PlaygroundRun.objects.create(
        account=assistant.account, assistant=assistant, start_key="assistant", message="hello"
    )
    listener = Listener(live_redis, f"playground:{run.pk}")
    llm_settings.push(text("Hi! How can I help?"))

    assert playground_turn_run(run_id=run.pk) == "reply"
    messages = listener.until_end()
    kinds = [m["event"]["type"] for m in messages if m["type"] == "event"]
    assert "llm_call" in kinds
    assert messages[-1]["type"] == "end"
    assert PlaygroundRun.objects.get(pk=run.pk).status == PlaygroundRun.Status.DONE
    # The customer's reply is the turn's result, not a thought: nothing internal was published as one.
    assert not [m for m in messages if m["type"] == "thought"]


@pytest.mark.django_db
def test_a_credential_of_the_account_is_never_published(live_redis):
    """A tool result that echoed the custom tool's token (into the model's context, then a thought and an
    event): the live message carries "[redacted]" instead, as the debug log does."""
    from captain.actions.models import CustomTool
    from captain.crypto import secret_encrypt
    from tests.factories import AccountFactory

    token = "sk-live-echoed-4242"
    account = AccountFactory()
    CustomTool.objects.create(
        account=account,
        name="get_order",
        description="Look up an order.",
        url_template="https://shop.example/orders",
        auth_type="bearer",
        secret_encrypted=secret_encrypt(token),
    )
    context = RunContext(account_id=account.id, conversation_id=None)
    listener = Listener(live_redis, "playground:11")
    publisher = LivePublisher("playground:11")
    publisher.on_thought(context, AGENT, f"The API said my token is {token}.")
    publisher.on_event(
        context, AGENT, RunEvent("tool_call", "orders", name="get_order", data={"result": f"auth {token}"})
    )
    live_end("playground:11")
    raw = json.dumps(listener.until_end())
    assert token not in raw
    assert raw.count("[redacted]") == 2
