"""Guards in the run loop for failures seen in other agent frameworks."""

from __future__ import annotations

import copy
from typing import Any

from captain.runtime import (
    Agent,
    Handoff,
    HumanHandoff,
    ModelResponse,
    Reply,
    RunContext,
    Runner,
    ToolCall,
    Usage,
)
from captain.runtime.promises import PROMISED_TRANSFER


class ScriptedModel:
    """Answers with the next scripted response and records every request, tool_choice included."""

    provider_name = "scripted"

    def __init__(self, *steps: ModelResponse) -> None:
        self.steps = list(steps)
        self.calls: list[dict[str, Any]] = []

    def complete(self, *, model, messages, tools=(), settings=None) -> ModelResponse:
        tool_choice = settings.tool_choice if settings else None
        self.calls.append(copy.deepcopy({"messages": messages, "tools": tools, "tool_choice": tool_choice}))
        assert self.steps, f"unexpected model call #{len(self.calls)}"
        return self.steps.pop(0)


def reply(text: str) -> ModelResponse:
    return ModelResponse(content=text, tool_calls=[], usage=Usage(1, 10, 5), model="m")


def tool_call_response(name: str, arguments: dict) -> ModelResponse:
    return ModelResponse(
        content=None, tool_calls=[ToolCall("c1", name, "{}")], usage=Usage(1, 10, 5), model="m"
    )


def team():
    return {
        "assistant": Agent("assistant", "Triage", "Route.", "m", handoffs=[Handoff("refunds", "Refunds")]),
        "refunds": Agent("refunds", "Refunds", "Refunds.", "m"),
    }


def run(model):
    return Runner(model).run(
        agents=team(),
        start_key="assistant",
        messages=[{"role": "user", "content": "money back"}],
        context=RunContext(1, None),
    )


def test_a_false_transfer_promise_is_re_asked_with_the_handoff_tools_required():
    model = ScriptedModel(
        reply("Sure, I'll transfer you to our refunds team."),
        tool_call_response("handoff_to_refunds", {}),
        reply("Refund started."),
    )
    result = run(model)
    assert result.route == ["assistant", "refunds"] and result.outcome == Reply("Refund started.")
    assert model.calls[1]["tool_choice"] == "required"
    assert [t["function"]["name"] for t in model.calls[1]["tools"]] == ["handoff_to_refunds"]
    assert any(
        e.type == "transfer_promised" and e.data["result"] == "handoff on re-ask" for e in result.events
    )


def test_a_false_promise_that_still_calls_nothing_becomes_a_handoff_to_people():
    # The customer was told a transfer is happening: leaving them with the bot would break that promise.
    model = ScriptedModel(reply("我马上为您转接退款专员。"), reply("好的"))
    result = run(model)
    assert result.route == ["assistant"] and isinstance(result.outcome, HumanHandoff)
    assert result.outcome.reason == PROMISED_TRANSFER
    assert any(
        e.type == "transfer_promised" and e.data["result"] == "to people: no handoff on re-ask"
        for e in result.events
    )


def test_an_ordinary_reply_is_not_re_asked():
    model = ScriptedModel(reply("Refunds take five days."))
    assert run(model).outcome == Reply("Refunds take five days.") and len(model.calls) == 1


def test_a_transfer_tool_that_does_not_exist_is_refused_not_followed():
    model = ScriptedModel(tool_call_response("handoff_to_billing", {}), reply("I can help here."))
    result = run(model)
    assert result.route == ["assistant"]
    assert any(e.type == "handoff_refused" for e in result.events)


def test_a_promise_to_reach_a_person_can_end_in_a_human_handoff_not_a_wrong_specialist():
    from captain.runtime import HumanHandoff, Tool, ToolOutput

    escalate = Tool(
        name="handoff_to_human",
        description="Hand to people.",
        parameters={"type": "object", "properties": {"reason": {"type": "string"}}, "required": ["reason"]},
        function=lambda ctx, args: ToolOutput("ok", outcome=HumanHandoff(reason=args["reason"])),
    )
    agents = team()
    agents["assistant"].tools = [escalate]
    model = ScriptedModel(
        reply("I'm connecting you with a member of our team."),
        ModelResponse(
            content=None,
            tool_calls=[ToolCall("c1", "handoff_to_human", '{"reason": "asked for a person"}')],
            usage=Usage(1, 10, 5),
            model="m",
        ),
    )
    result = Runner(model).run(
        agents=agents,
        start_key="assistant",
        messages=[{"role": "user", "content": "a person please"}],
        context=RunContext(1, None),
    )
    assert sorted(t["function"]["name"] for t in model.calls[1]["tools"]) == [
        "handoff_to_human",
        "handoff_to_refunds",
    ]
    assert result.outcome == HumanHandoff(reason="asked for a person")
    assert result.route == ["assistant"]
