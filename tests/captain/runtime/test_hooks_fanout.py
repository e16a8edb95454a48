"""FanOutHooks gives every hook every callback of a real run (scripted model, planning agent), in order; the
tracing hook among them writes thoughts and plan states as span events (content only when recorded)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from captain.runtime import Agent, RunContext, RunEvent, RunHooks, Runner
from captain.runtime.hooks import FanOutHooks
from captain.runtime.tracing import (
    CAPTAIN_PLAN_STATE,
    CAPTAIN_PLAN_STEPS_DONE,
    CAPTAIN_THOUGHT_TEXT,
    EVENT_PLAN,
    EVENT_THOUGHT,
    TracingHooks,
)
from tests.captain.runtime.test_planning import Shop, _agent
from tests.captain.runtime.test_runner import ScriptedModel, calls


class Recorder(RunHooks):
    """Writes down every callback it gets, with the names of what it got."""

    def __init__(self, name: str, log: list[tuple[str, str, str]]) -> None:
        self.name = name
        self.log = log
        self.own: list[tuple[str, str]] = []

    def _add(self, method: str, detail: str) -> None:
        self.own.append((method, detail))
        self.log.append((self.name, method, detail))

    def on_agent_start(self, context: RunContext, agent: Agent) -> None:
        self._add("agent_start", agent.key)

    def on_llm_end(self, context: RunContext, agent: Agent, response: Any) -> None:
        self._add("llm_end", agent.key)

    def on_tool_end(self, context: RunContext, agent: Agent, call: Any, result: str) -> None:
        self._add("tool_end", call.name)

    def on_handoff(self, context: RunContext, from_agent: Agent, to_agent: Agent) -> None:
        self._add("handoff", f"{from_agent.key}->{to_agent.key}")

    def on_event(self, context: RunContext, agent: Agent, event: RunEvent) -> None:
        self._add("event", event.type)

    def on_thought(self, context: RunContext, agent: Agent, delta: str) -> None:
        self._add("thought", delta)


def _planning_model() -> ScriptedModel:
    return ScriptedModel(
        calls(("update_plan", {"steps": ["Look up order 1042", "Tell the status"], "next": "look up"})),
        calls(("get_order", {"order_id": "1042"})),
        calls(("update_plan", {"done": [1], "next": "tell the status"})),
        calls(("think", {"thought": "Delivered, paid 20."})),
        calls(("final_answer", {"answer": "Your order 1042 was delivered."})),
    )


def _run(hooks: RunHooks, provider: TracerProvider) -> None:
    agent = _agent(Shop())
    Runner(_planning_model(), hooks=hooks, tracer_provider=provider).run(
        agents={agent.key: agent},
        start_key=agent.key,
        messages=[{"role": "user", "content": "where is order 1042?"}],
        context=RunContext(account_id=1, conversation_id=1),
    )


def _provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def test_every_hook_gets_every_callback_in_order() -> None:
    log: list[tuple[str, str, str]] = []
    first, second = Recorder("first", log), Recorder("second", log)
    provider, _ = _provider()
    _run(FanOutHooks(first, second), provider)

    assert first.own == second.own
    methods = {method for method, _ in first.own}
    assert {"agent_start", "llm_end", "tool_end", "event", "thought"} <= methods
    assert ("thought", "Delivered, paid 20.") in first.own
    # Each callback reaches the first hook, then the second, before the next callback starts.
    assert [name for name, _, _ in log] == ["first", "second"] * len(first.own)
    assert [(m, d) for _, m, d in log[::2]] == first.own


def test_a_hook_that_fails_stops_the_fan_out_like_a_single_hook() -> None:
    class Broken(RunHooks):
        def on_agent_start(self, context: RunContext, agent: Agent) -> None:
            raise RuntimeError("host bug")

    log: list[tuple[str, str, str]] = []
    after = Recorder("after", log)
    provider, _ = _provider()
    with pytest.raises(RuntimeError, match="host bug"):
        _run(FanOutHooks(Broken(), after), provider)
    assert after.own == []


@pytest.mark.parametrize("record_content", [True, False])
def test_tracing_in_the_fan_out_writes_thoughts_and_plans_as_span_events(record_content: bool) -> None:
    provider, exporter = _provider()
    log: list[tuple[str, str, str]] = []
    _run(FanOutHooks(TracingHooks(record_content=record_content), Recorder("r", log)), provider)

    events = [e for span in exporter.get_finished_spans() for e in span.events]
    thoughts = [e for e in events if e.name == EVENT_THOUGHT]
    plans = [e for e in events if e.name == EVENT_PLAN]
    assert len(thoughts) == 1  # streamed pieces and the closing `thought` event: written once
    assert len(plans) >= 2
    assert plans[-1].attributes[CAPTAIN_PLAN_STEPS_DONE] >= 1
    if record_content:
        assert thoughts[0].attributes[CAPTAIN_THOUGHT_TEXT] == "Delivered, paid 20."
        state = json.loads(plans[-1].attributes[CAPTAIN_PLAN_STATE])
        assert [s["text"] for s in state["steps"]] == ["Look up order 1042", "Tell the status"]
        assert state["steps"][0]["done"] is True
    else:
        assert CAPTAIN_THOUGHT_TEXT not in thoughts[0].attributes
        assert all(CAPTAIN_PLAN_STATE not in p.attributes for p in plans)
        assert not any("Delivered" in str(v) for e in events for v in e.attributes.values())


def test_a_streamed_text_protocol_thought_reaches_every_hook_in_pieces_and_the_trace_whole() -> None:
    """The text protocol over real streamed HTTP (the scripted server): the recorder gets the thought in many
    pieces as it is written, the trace gets it once per model call, whole."""
    from captain.runtime import OpenAIChatModel, Tool, make_openai_client
    from tests.support.fake_llm_server import FakeLLMServer, streamed

    first = (
        "Thought: The customer asks about order A-1042; I look it up.\n"
        '<action name="lookup_order">{"order_id": "A-1042"}</action>'
    )
    second = "Thought: It ships tomorrow.\n<final_answer>Your order A-1042 ships tomorrow.</final_answer>"
    lookup = Tool(
        "lookup_order",
        "Find an order.",
        {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
        lambda ctx, args: '{"status": "ships tomorrow"}',
    )
    agent = Agent(
        key="orders",
        name="Orders",
        instructions="You handle orders.",
        model="small",
        tools=[lookup],
        tool_protocol="text",
    )
    log: list[tuple[str, str, str]] = []
    recorder = Recorder("r", log)
    provider, exporter = _provider()
    pieces = [first[i : i + 4] for i in range(0, len(first), 4)]
    with FakeLLMServer([streamed(first, chunks=pieces, delay=0.002), streamed(second)]) as server:
        client = OpenAIChatModel(make_openai_client(server.base_url, None, timeout=5, max_retries=0))
        result = Runner(client, hooks=FanOutHooks(TracingHooks(), recorder), tracer_provider=provider).run(
            agents={agent.key: agent},
            start_key=agent.key,
            messages=[{"role": "user", "content": "Where is A-1042?"}],
            context=RunContext(account_id=1, conversation_id=1),
        )
    assert result.outcome.text == "Your order A-1042 ships tomorrow."
    deltas = [d for m, d in recorder.own if m == "thought"]
    assert len(deltas) > 5, "the thought reaches the hooks in pieces, as it is written"
    assert "".join(deltas).startswith("The customer asks about order A-1042; I look it up.")
    thoughts = [
        e.attributes[CAPTAIN_THOUGHT_TEXT]
        for span in exporter.get_finished_spans()
        for e in span.events
        if e.name == EVENT_THOUGHT
    ]
    assert thoughts == ["The customer asks about order A-1042; I look it up.", "It ships tomorrow."]
