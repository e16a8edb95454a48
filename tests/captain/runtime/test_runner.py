"""The run loop's rules, driven by a scripted in-process model: no network, no Django."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from captain.runtime import (
    Agent,
    Handoff,
    HumanHandoff,
    ModelError,
    ModelResponse,
    ModelSettings,
    Reply,
    RunContext,
    RunError,
    RunHooks,
    Runner,
    Tool,
    ToolCall,
    ToolOutput,
    Usage,
)
from captain.runtime import semconv as sc
from captain.runtime.model import DEFAULT_SETTINGS

# ---- a scripted model --------------------------------------------------------------------------------------

Step = ModelResponse | ModelError | Callable[[dict[str, Any]], ModelResponse]


class ScriptedModel:
    """Answers each `complete` with the next scripted step; a call past the script fails the test."""

    provider_name = "scripted"

    def __init__(self, *steps: Step) -> None:
        self.steps = list(steps)
        self.calls: list[dict[str, Any]] = []

    def complete(
        self,
        *,
        model: str,
        messages: list[dict[str, Any]],
        tools: Sequence[dict[str, Any]] = (),
        settings: ModelSettings = DEFAULT_SETTINGS,
    ) -> ModelResponse:
        call = copy.deepcopy(
            {"model": model, "messages": messages, "tools": list(tools), "temperature": settings.temperature}
        )
        self.calls.append(call)
        if not self.steps:
            raise AssertionError(f"unexpected model call #{len(self.calls)}")
        step = self.steps.pop(0)
        if isinstance(step, ModelError):
            raise step
        if callable(step):
            return step(call)
        return step

    def offered(self, index: int) -> list[str]:
        return [t["function"]["name"] for t in self.calls[index]["tools"]]


_call_ids = iter(range(1, 1_000_000))


def reply(text: str | None, *, input_tokens: int = 10, output_tokens: int = 5) -> ModelResponse:
    return ModelResponse(
        content=text, tool_calls=[], usage=Usage(1, input_tokens, output_tokens), model="scripted-model"
    )


def calls(
    *items: tuple[str, dict[str, Any] | str], input_tokens: int = 10, output_tokens: int = 5
) -> ModelResponse:
    tool_calls = [
        ToolCall(
            id=f"call_{next(_call_ids)}",
            name=name,
            arguments=arguments if isinstance(arguments, str) else json.dumps(arguments),
        )
        for name, arguments in items
    ]
    return ModelResponse(
        content=None,
        tool_calls=tool_calls,
        usage=Usage(1, input_tokens, output_tokens),
        model="scripted-model",
    )


# ---- a small team: triage <-> billing, triage <-> shipping -------------------------------------------------

FAQ_SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1},
        "limit": {"type": "integer", "minimum": 1, "maximum": 5},
        "language": {"type": "string", "enum": ["en", "zh"]},
    },
    "required": ["query"],
    "additionalProperties": False,
}


class Recorder:
    """Tool functions that remember how they were called."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.contexts: list[RunContext] = []

    def faq(self, ctx: RunContext, args: dict[str, Any]) -> str:
        self.calls.append(("faq_lookup", args))
        self.contexts.append(ctx)
        return f"FAQ answer for {args['query']}"

    def refund(self, ctx: RunContext, args: dict[str, Any]) -> ToolOutput:
        self.calls.append(("issue_refund", args))
        return ToolOutput(content="refund queued")

    def escalate(self, ctx: RunContext, args: dict[str, Any]) -> ToolOutput:
        self.calls.append(("handoff_to_human", args))
        return ToolOutput(
            content="A person will take over.", outcome=HumanHandoff(reason=args.get("reason", ""))
        )

    def broken(self, ctx: RunContext, args: dict[str, Any]) -> str:
        self.calls.append(("order_status", args))
        raise RuntimeError("database is down: secret dsn")


def make_team(rec: Recorder) -> dict[str, Agent]:
    faq = Tool("faq_lookup", "Search the FAQ.", FAQ_SCHEMA, rec.faq)
    human = Tool(
        "handoff_to_human",
        "Give the conversation to a person.",
        {"type": "object", "properties": {"reason": {"type": "string"}}, "required": ["reason"]},
        rec.escalate,
    )
    order_status = Tool(
        "order_status",
        "Look up an order.",
        {"type": "object", "properties": {"order_id": {"type": "integer"}}, "required": ["order_id"]},
        rec.broken,
    )
    refund = Tool(
        "issue_refund",
        "Refund an order.",
        {"type": "object", "properties": {"order_id": {"type": "integer"}}, "required": ["order_id"]},
        rec.refund,
    )
    return {
        "triage": Agent(
            key="triage",
            name="Triage",
            instructions="You are triage.",
            model="triage-model",
            tools=[faq, human, order_status],
            handoffs=[Handoff("billing", "Billing questions."), Handoff("shipping", "Shipping questions.")],
        ),
        "billing": Agent(
            key="billing",
            name="Billing",
            instructions="You are billing.",
            model="billing-model",
            tools=[refund],
            handoffs=[Handoff("triage", "Anything that is not billing.")],
        ),
        "shipping": Agent(
            key="shipping",
            name="Shipping",
            instructions="You are shipping.",
            model="shipping-model",
            handoffs=[Handoff("triage", "Anything that is not shipping.")],
        ),
    }


HISTORY = [{"role": "user", "content": "Hello, where is my refund?"}]


def run(model: ScriptedModel, rec: Recorder | None = None, *, start: str = "triage", **runner_kwargs: Any):
    team = make_team(rec or Recorder())
    context = RunContext(account_id=7, conversation_id=42)
    result = Runner(model, **runner_kwargs).run(
        agents=team, start_key=start, messages=HISTORY, context=context
    )
    return result, context


def tool_messages(call: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in call["messages"] if m["role"] == "tool"]


def event_types(result) -> list[str]:
    return [e.type for e in result.events]


# ---- final replies -----------------------------------------------------------------------------------------


def test_text_reply_ends_the_run_with_a_reply():
    model = ScriptedModel(reply("  Your refund is on its way.\n"))
    result, _ = run(model)

    assert result.outcome == Reply("Your refund is on its way.")
    assert result.agent_key == "triage"
    assert result.route == ["triage"]
    sent = model.calls[0]["messages"]
    assert sent[0] == {"role": "system", "content": "You are triage."}
    assert sent[1:] == HISTORY
    assert model.calls[0]["model"] == "triage-model"
    assert model.offered(0) == [
        "faq_lookup",
        "handoff_to_human",
        "order_status",
        "handoff_to_billing",
        "handoff_to_shipping",
    ]


@pytest.mark.parametrize("content", ["", "   \n\t", None])
def test_empty_or_blank_reply_is_an_error_not_a_message(content):
    result, _ = run(ScriptedModel(reply(content)))

    assert isinstance(result.outcome, RunError)
    assert result.outcome.error == "empty_reply"


# ---- function tools ----------------------------------------------------------------------------------------


def test_tool_round_trip_gives_the_result_back_to_the_same_agent():
    rec = Recorder()
    model = ScriptedModel(
        calls(("faq_lookup", {"query": "refund", "limit": 2})), reply("Refunds take 5 days.")
    )
    result, context = run(model, rec)

    assert result.outcome == Reply("Refunds take 5 days.")
    assert rec.calls == [("faq_lookup", {"query": "refund", "limit": 2})]
    assert rec.contexts == [context]  # the tool gets the run context (ids), never ids from the model
    second = model.calls[1]["messages"]
    assert second[-2]["role"] == "assistant"
    assert second[-2]["tool_calls"][0]["function"] == {
        "name": "faq_lookup",
        "arguments": json.dumps({"query": "refund", "limit": 2}),
    }
    assert second[-1] == {
        "role": "tool",
        "tool_call_id": second[-2]["tool_calls"][0]["id"],
        "content": "FAQ answer for refund",
    }
    assert event_types(result) == ["llm_call", "tool_call", "llm_call"]
    assert result.events[1].data["result"] == "FAQ answer for refund"


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        ({"query": 42}, "42 is not of type 'string'"),
        ({"query": "x", "limit": 9}, "limit: 9 is greater than the maximum of 5"),
        ({"query": "x", "limit": True}, "limit: True is not of type 'integer'"),
        ({"query": "x", "language": "fr"}, "language: 'fr' is not one of ['en', 'zh']"),
        (
            {"query": "x", "account_id": 1},
            "Additional properties are not allowed ('account_id' was unexpected)",
        ),
        ({}, "'query' is a required property"),
        ('{"query": "x"', "arguments are not valid JSON"),
        ('["x"]', "arguments must be a JSON object, got list"),
    ],
)
def test_invalid_arguments_are_explained_to_the_model_and_the_tool_never_runs(arguments, complaint):
    rec = Recorder()
    model = ScriptedModel(calls(("faq_lookup", arguments)), reply("Sorry."))
    result, _ = run(model, rec)

    assert rec.calls == []
    assert result.outcome == Reply("Sorry.")  # the loop went on
    [error_event] = [e for e in result.events if e.type == "tool_error"]
    assert complaint in error_event.detail
    [tool_result] = tool_messages(model.calls[1])
    assert tool_result["content"].startswith("error: invalid arguments for faq_lookup")
    assert complaint in tool_result["content"]


def test_extra_fields_are_refused_even_when_the_schema_forgot_additional_properties():
    rec = Recorder()
    model = ScriptedModel(calls(("issue_refund", {"order_id": 5, "amount": 1000})), reply("ok"))
    result, _ = run(model, rec, start="billing")

    assert rec.calls == []
    assert "'amount' was unexpected" in next(e for e in result.events if e.type == "tool_error").detail
    offered = model.calls[0]["tools"][0]["function"]["parameters"]
    assert offered["additionalProperties"] is False  # the model is shown the schema we enforce


def test_empty_argument_string_means_no_arguments():
    rec = Recorder()
    model = ScriptedModel(calls(("faq_lookup", "")), reply("ok"))
    result, _ = run(model, rec)

    assert result.outcome == Reply("ok")
    assert rec.calls == []
    assert "'query' is a required property" in tool_messages(model.calls[1])[0]["content"]
    assert "not valid JSON" not in tool_messages(model.calls[1])[0]["content"]


def test_tool_exception_becomes_an_error_result_and_the_run_continues():
    rec = Recorder()
    model = ScriptedModel(calls(("order_status", {"order_id": 1})), reply("I could not look that up."))
    result, _ = run(model, rec)

    assert result.outcome == Reply("I could not look that up.")
    [event] = [e for e in result.events if e.type == "tool_error"]
    assert event.detail == "RuntimeError: database is down: secret dsn"
    [tool_result] = tool_messages(model.calls[1])
    assert (
        tool_result["content"] == "error: order_status failed. Do not call it again with the same arguments."
    )
    assert "secret" not in tool_result["content"]  # internal error text never reaches the model


def test_tool_returning_an_unsupported_type_is_a_tool_error():
    rec = Recorder()
    team = make_team(rec)
    returns_dict: Any = lambda ctx, args: {"x": 1}  # noqa: E731  (deliberately breaks the ToolFunction contract)
    team["triage"].tools.append(Tool("weird", "returns a dict", {"type": "object"}, returns_dict))
    model = ScriptedModel(calls(("weird", {})), reply("ok"))
    result = Runner(model).run(agents=team, start_key="triage", messages=HISTORY, context=RunContext(1, 1))

    assert result.outcome == Reply("ok")
    assert "tool returned dict" in next(e for e in result.events if e.type == "tool_error").detail


def test_tool_with_an_outcome_ends_the_run_and_later_calls_in_the_response_do_not_run():
    rec = Recorder()
    model = ScriptedModel(
        calls(
            ("handoff_to_human", {"reason": "angry customer"}),
            ("faq_lookup", {"query": "refund"}),
            ("handoff_to_billing", {}),
        )
    )
    result, _ = run(model, rec)

    assert result.outcome == HumanHandoff(reason="angry customer")
    assert rec.calls == [("handoff_to_human", {"reason": "angry customer"})]
    assert result.route == ["triage"]
    assert len(model.calls) == 1
    assert result.events[-1].type == "tool_call"
    assert result.events[-1].data["outcome"] == "human_handoff"


# ---- allowlists --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["issue_refund", "drop_database"])
def test_a_tool_the_agent_does_not_own_is_refused_and_nothing_runs(name):
    """`issue_refund` exists, but belongs to billing; `drop_database` exists nowhere."""
    rec = Recorder()
    model = ScriptedModel(calls((name, {"order_id": 1})), reply("ok"))
    result, _ = run(model, rec)

    assert rec.calls == []
    assert result.outcome == Reply("ok")
    [event] = [e for e in result.events if e.type == "tool_refused"]
    assert event.name == name
    [tool_result] = tool_messages(model.calls[1])
    assert tool_result["content"].startswith(f"refused: unknown tool {name!r}")
    assert "faq_lookup" in tool_result["content"]  # tells the model what it can call instead


@pytest.mark.parametrize(
    ("name", "detail"),
    [
        ("handoff_to_shipping", "not in the handoff allowlist"),  # an agent, but not an edge of billing
        ("handoff_to_nowhere", "not in the handoff allowlist"),  # no such agent at all
    ],
)
def test_a_handoff_the_agent_does_not_own_is_refused_and_control_stays(name, detail):
    model = ScriptedModel(calls((name, {})), reply("Billing here."))
    result, _ = run(model, start="billing")

    assert result.route == ["billing"]
    assert result.agent_key == "billing"
    assert model.calls[1]["messages"][0]["content"] == "You are billing."
    [event] = [e for e in result.events if e.type == "handoff_refused"]
    assert (event.name, event.detail) == (name, detail)
    assert "handoff" not in event_types(result)
    assert tool_messages(model.calls[1])[0]["content"].startswith(f"refused: unknown tool {name!r}")


def test_an_owned_handoff_to_an_agent_missing_from_the_team_is_refused():
    rec = Recorder()
    team = make_team(rec)
    del team["shipping"]  # e.g. the scenario was disabled after the edge was drawn
    model = ScriptedModel(calls(("handoff_to_shipping", {})), reply("ok"))
    result = Runner(model).run(agents=team, start_key="triage", messages=HISTORY, context=RunContext(1, 1))

    assert result.route == ["triage"]
    [event] = [e for e in result.events if e.type == "handoff_refused"]
    assert event.detail == "target is not in the team"


# ---- handoffs ----------------------------------------------------------------------------------------------


def test_handoff_and_hand_back_keep_the_conversation_and_show_the_handoff():
    model = ScriptedModel(
        calls(("handoff_to_billing", {"reason": "refund question"})),
        calls(("handoff_to_triage", {"reason": "not billing"})),
        reply("Triage again: how can I help?"),
    )
    result, _ = run(model)

    assert result.outcome == Reply("Triage again: how can I help?")
    assert result.route == ["triage", "billing", "triage"]
    assert result.agent_key == "triage"
    assert [c["model"] for c in model.calls] == ["triage-model", "billing-model", "triage-model"]
    billing_call = model.calls[1]
    assert billing_call["messages"][0]["content"] == "You are billing."
    assert billing_call["messages"][1:2] == HISTORY
    assert billing_call["messages"][2]["tool_calls"][0]["function"]["name"] == "handoff_to_billing"
    assert billing_call["messages"][3]["content"] == "transferred to billing"
    assert model.offered(1) == ["issue_refund", "handoff_to_triage"]
    handoffs = [e for e in result.events if e.type == "handoff"]
    assert [(e.data["from"], e.data["to"], e.detail) for e in handoffs] == [
        ("triage", "billing", "refund question"),
        ("billing", "triage", "not billing"),
    ]


def test_only_the_first_of_several_handoffs_is_honoured_and_tools_alongside_still_run():
    rec = Recorder()
    model = ScriptedModel(
        calls(
            ("handoff_to_shipping", {}),
            ("faq_lookup", {"query": "refund"}),
            ("handoff_to_billing", {}),
        ),
        reply("Shipping here."),
    )
    result, _ = run(model, rec)

    assert result.route == ["triage", "shipping"]
    assert result.agent_key == "shipping"
    assert rec.calls == [("faq_lookup", {"query": "refund"})]
    assert [e.type for e in result.events if e.type.startswith("handoff")] == ["handoff_ignored", "handoff"]
    ignored = next(e for e in result.events if e.type == "handoff_ignored")
    assert ignored.name == "handoff_to_billing"
    contents = [m["content"] for m in tool_messages(model.calls[1])]
    assert contents == [
        "transferred to shipping",
        "FAQ answer for refund",
        "ignored: only the first handoff in a response is honoured; transferring to shipping.",
    ]


# ---- bounds ------------------------------------------------------------------------------------------------


def test_max_turns_bounds_model_calls():
    model = ScriptedModel(*(calls(("faq_lookup", {"query": f"q{i}"})) for i in range(3)))
    result, _ = run(model, max_turns=3)

    assert result.outcome == RunError("max_turns", "stopped after 3 model calls")
    assert len(model.calls) == 3
    assert result.usage.requests == 3


def test_deadline_stops_the_run_before_the_next_model_call():
    def slow(call: dict[str, Any]) -> ModelResponse:
        time.sleep(0.05)
        return calls(("faq_lookup", {"query": "slow"}))

    model = ScriptedModel(slow, reply("too late"))
    result, _ = run(model, deadline_seconds=0.03)

    assert isinstance(result.outcome, RunError)
    assert result.outcome.error == "deadline"
    assert len(model.calls) == 1


def test_model_error_ends_the_run_with_a_typed_error():
    model = ScriptedModel(
        calls(("faq_lookup", {"query": "x"})), ModelError("rate_limited", "slow down", status_code=429)
    )
    result, _ = run(model)

    assert result.outcome == RunError("model_error", "rate_limited (HTTP 429): slow down")
    assert result.events[-1].type == "llm_call"
    assert result.events[-1].data["error"] == "rate_limited"
    assert result.usage.requests == 1  # the failed call reported no usage


def test_loop_guard_stops_the_third_identical_call():
    rec = Recorder()
    same = {"query": "refund", "limit": 1}
    model = ScriptedModel(
        calls(("faq_lookup", same)),
        calls(("faq_lookup", {"query": "other"})),  # different arguments do not count
        calls(("faq_lookup", {"limit": 1, "query": "refund"})),  # same arguments, other key order
        calls(("faq_lookup", same)),
    )
    result, _ = run(model, rec)

    assert isinstance(result.outcome, RunError)
    assert result.outcome.error == "loop_detected"
    # The second identical call is answered with a pointer to the result the model already has, not run
    # again, and the next model call is made without that tool; the third identical call ends the run.
    assert len(rec.calls) == 2
    repeated = [m for m in model.calls[3]["messages"] if m["role"] == "tool"][-1]["content"]
    assert repeated.startswith("You already called faq_lookup with these arguments")
    assert "faq_lookup" not in model.offered(3)
    assert len(model.calls) == 4


def test_usage_accumulates_over_every_call_and_agent_into_result_and_context():
    model = ScriptedModel(
        calls(("faq_lookup", {"query": "x"}), input_tokens=100, output_tokens=10),
        calls(("handoff_to_billing", {}), input_tokens=120, output_tokens=7),
        reply("done", input_tokens=90, output_tokens=20),
    )
    team = make_team(Recorder())
    context = RunContext(
        account_id=1, conversation_id=2, usage=Usage(requests=4, input_tokens=1000, output_tokens=50)
    )
    result = Runner(model).run(agents=team, start_key="triage", messages=HISTORY, context=context)

    assert result.usage == Usage(requests=3, input_tokens=310, output_tokens=37)
    assert context.usage == Usage(requests=7, input_tokens=1310, output_tokens=87)


# ---- hooks -------------------------------------------------------------------------------------------------


def test_hooks_see_agents_model_calls_tools_and_handoffs_in_order():
    seen: list[str] = []

    class Hooks(RunHooks):
        def on_agent_start(self, context, agent):
            seen.append(f"start {agent.key}")

        def on_llm_end(self, context, agent, response):
            seen.append(f"llm {agent.key}")

        def on_tool_end(self, context, agent, call, result):
            seen.append(f"tool {call.name}")

        def on_handoff(self, context, from_agent, to_agent):
            seen.append(f"handoff {from_agent.key}->{to_agent.key}")

    model = ScriptedModel(
        calls(("faq_lookup", {"query": "x"})), calls(("handoff_to_billing", {})), reply("hi")
    )
    run(model, hooks=Hooks())

    assert seen == [
        "start triage",
        "llm triage",
        "tool faq_lookup",
        "llm triage",
        "handoff triage->billing",
        "start billing",
        "llm billing",
    ]


# ---- spans -------------------------------------------------------------------------------------------------


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def _by_name(finished: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [s for s in finished if s.name == name]


def test_spans_record_agents_llm_calls_tools_handoffs_and_run_totals(spans):
    provider, exporter = spans
    model = ScriptedModel(
        calls(("faq_lookup", {"query": "refund"}), ("drop_database", {}), input_tokens=100, output_tokens=10),
        calls(("handoff_to_billing", {"reason": "refund"}), input_tokens=120, output_tokens=7),
        reply("done", input_tokens=90, output_tokens=20),
    )
    runner = Runner(model, tracer_provider=provider)
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span(sc.SPAN_RUN):
        runner.run(
            agents=make_team(Recorder()), start_key="triage", messages=HISTORY, context=RunContext(7, 42)
        )

    finished = exporter.get_finished_spans()
    [run_span] = _by_name(finished, sc.SPAN_RUN)
    agent_spans = _by_name(finished, sc.SPAN_AGENT)
    llm_spans = _by_name(finished, sc.SPAN_LLM)
    tool_spans = _by_name(finished, sc.SPAN_TOOL)
    [handoff_span] = _by_name(finished, sc.SPAN_HANDOFF)

    assert [s.attributes[sc.GEN_AI_AGENT_ID] for s in agent_spans] == ["triage", "billing"]
    assert all(s.parent.span_id == run_span.context.span_id for s in agent_spans)
    assert agent_spans[0].attributes[sc.CAPTAIN_CONVERSATION_ID] == 42
    assert agent_spans[0].attributes[sc.CAPTAIN_ACCOUNT_ID] == 7

    assert len(llm_spans) == 3
    first = llm_spans[0].attributes
    assert first[sc.GEN_AI_REQUEST_MODEL] == "triage-model"
    assert first[sc.GEN_AI_RESPONSE_MODEL] == "scripted-model"
    assert first[sc.GEN_AI_PROVIDER_NAME] == "scripted"
    assert (first[sc.GEN_AI_USAGE_INPUT_TOKENS], first[sc.GEN_AI_USAGE_OUTPUT_TOKENS]) == (100, 10)
    assert json.loads(first[sc.GEN_AI_INPUT_MESSAGES])[0] == {"role": "system", "content": "You are triage."}
    output = json.loads(first[sc.GEN_AI_OUTPUT_MESSAGES])
    assert [c["function"]["name"] for c in output["tool_calls"]] == ["faq_lookup", "drop_database"]
    assert llm_spans[2].parent.span_id == agent_spans[1].context.span_id

    faq_span, refused_span = tool_spans
    assert faq_span.attributes[sc.GEN_AI_TOOL_NAME] == "faq_lookup"
    assert json.loads(faq_span.attributes[sc.CAPTAIN_TOOL_ARGUMENTS]) == {"query": "refund"}
    assert faq_span.attributes[sc.CAPTAIN_TOOL_RESULT] == "FAQ answer for refund"
    assert sc.CAPTAIN_TOOL_REFUSED not in faq_span.attributes
    assert refused_span.attributes[sc.CAPTAIN_TOOL_REFUSED] is True

    assert handoff_span.attributes[sc.CAPTAIN_HANDOFF_FROM] == "triage"
    assert handoff_span.attributes[sc.CAPTAIN_HANDOFF_TO] == "billing"
    assert handoff_span.attributes[sc.CAPTAIN_HANDOFF_STATUS] == "accepted"
    assert handoff_span.parent.span_id == agent_spans[0].context.span_id

    totals = run_span.attributes
    assert list(totals[sc.CAPTAIN_RUN_ROUTE]) == ["triage", "billing"]
    assert totals[sc.CAPTAIN_RUN_OUTCOME] == "reply"
    assert totals[sc.CAPTAIN_RUN_AGENT] == "billing"
    assert (totals[sc.CAPTAIN_USAGE_INPUT_TOKENS], totals[sc.CAPTAIN_USAGE_OUTPUT_TOKENS]) == (310, 37)
    assert totals[sc.CAPTAIN_USAGE_REQUESTS] == 3


def test_failed_tool_and_failed_model_call_mark_their_spans_as_errors(spans):
    provider, exporter = spans
    model = ScriptedModel(
        calls(("order_status", {"order_id": 1})), ModelError("timeout", "Request timed out.")
    )
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span(sc.SPAN_RUN):
        Runner(model, tracer_provider=provider).run(
            agents=make_team(Recorder()), start_key="triage", messages=HISTORY, context=RunContext(1, None)
        )

    finished = exporter.get_finished_spans()
    [tool_span] = _by_name(finished, sc.SPAN_TOOL)
    assert tool_span.status.is_ok is False
    assert tool_span.attributes[sc.ERROR_TYPE] == "RuntimeError"
    failed_llm = _by_name(finished, sc.SPAN_LLM)[1]
    assert failed_llm.attributes[sc.CAPTAIN_LLM_ERROR] == "timeout"
    assert failed_llm.status.is_ok is False
    [run_span] = _by_name(finished, sc.SPAN_RUN)
    assert run_span.attributes[sc.CAPTAIN_RUN_OUTCOME] == "error"
    assert run_span.attributes[sc.CAPTAIN_RUN_ERROR] == "model_timeout"
    assert sc.CAPTAIN_CONVERSATION_ID not in _by_name(finished, sc.SPAN_AGENT)[0].attributes


def test_record_content_off_keeps_messages_arguments_and_results_out_of_spans(spans):
    provider, exporter = spans
    model = ScriptedModel(
        calls(("faq_lookup", {"query": "my card 4111"}), ("order_status", {"order_id": 1})),
        reply("secret reply"),
    )
    Runner(model, tracer_provider=provider, record_content=False).run(
        agents=make_team(Recorder()), start_key="triage", messages=HISTORY, context=RunContext(1, 2)
    )

    dumped = json.dumps([dict(s.attributes) for s in exporter.get_finished_spans()])
    for private in ("4111", "secret", "Hello, where is my refund?", "FAQ answer"):
        assert private not in dumped
    [llm_span, *_] = _by_name(exporter.get_finished_spans(), sc.SPAN_LLM)
    assert llm_span.attributes[sc.GEN_AI_USAGE_INPUT_TOKENS] == 10  # metadata stays


def test_unknown_start_agent_is_a_programming_error():
    with pytest.raises(ValueError, match="start agent 'nobody'"):
        Runner(ScriptedModel()).run(
            agents=make_team(Recorder()), start_key="nobody", messages=[], context=RunContext(1, 1)
        )


def test_handoff_written_as_text_is_recovered_and_honoured():
    from captain.runtime import Agent, Handoff, Reply, RunContext, Runner

    class Scripted:
        def __init__(self, responses):
            self.responses = list(responses)

        def complete(self, **kwargs):
            return self.responses.pop(0)

    from captain.runtime import ModelResponse, Usage

    def said(text):
        return ModelResponse(content=text, tool_calls=[], usage=Usage(requests=1), model="m")

    triage = Agent(key="assistant", name="A", instructions="", model="m", handoffs=[Handoff("refunds", "r")])
    refunds = Agent(key="refunds", name="R", instructions="", model="m")
    model = Scripted([said('{"name": "handoff_to_refunds", "arguments": {"reason": "x"}}'), said("Done.")])
    result = Runner(model).run(
        agents={"assistant": triage, "refunds": refunds},
        start_key="assistant",
        messages=[{"role": "user", "content": "refund please"}],
        context=RunContext(account_id=1, conversation_id=1),
    )
    assert result.outcome == Reply("Done.")
    assert result.route == ["assistant", "refunds"]
    assert [e.type for e in result.events if e.type == "tool_call_recovered"] == ["tool_call_recovered"]
