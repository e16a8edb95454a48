"""One model response turned into the run's next step (`process_model_response`, as in openai-agents-python
v0.0.x).

A response without calls is the agent's reply (or, for a planning agent, a reminder to act through its tools);
a response with calls runs them in order: each call is checked against the loop guard, then run as one of the
agent's tools (`tool_calls`), taken as a handoff (the first one wins), or refused as outside the agent's
allowlist. Also here: the one last answer-only call of a planning agent (`force_final`) and the re-ask of an
agent that promised a transfer without making it (`reask_for_handoff`).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from . import planning, text_protocol
from .hooks import assistant_message
from .model import ModelError, ModelResponse, ToolCall
from .model_calls import call_model
from .promises import PROMISED_TRANSFER, said_transfer
from .run_state import (
    NextStep,
    NextStepFinalOutput,
    NextStepHandoff,
    NextStepRunAgain,
    NextStepStop,
    RunState,
)
from .schemas import parse_arguments
from .structured import parse_reply
from .text_tools import recover_text_tool_calls
from .tool_calls import execute_tool, repeat
from .types import (
    HANDOFF_PREFIX,
    Agent,
    ErrorKind,
    Handoff,
    HumanHandoff,
    Reply,
    RunError,
    RunEvent,
    Tool,
)


def process_model_response(state: RunState, agent: Agent, response: ModelResponse) -> NextStep:
    said = (response.content or "").strip()
    if response.tool_calls and said and agent.tool_protocol == "native":
        # Text written next to native calls is the model's reasoning for them: visible, never sent.
        state.thought(agent, said, streamed=False)
    if not response.tool_calls:
        response = _recover_text_calls(state, agent, response)
    if not response.tool_calls:
        return _text_reply(state, agent, (response.content or "").strip())
    # Every call gets a tool result message, whatever happens to it: the Chat Completions API rejects a
    # history with an unanswered tool call, and the model learns from the refusal or error text.
    state.items.append(
        text_protocol.assistant_item(state.text_raw)
        if agent.tool_protocol == "text"
        else assistant_message(response)
    )
    return _run_calls(state, agent, response.tool_calls)


def _recover_text_calls(state: RunState, agent: Agent, response: ModelResponse) -> ModelResponse:
    """A call the model wrote as text instead of calling it becomes the call it meant."""
    offered = [t.name for t in state.agent_tools(agent)] + [h.tool_name for h in agent.handoffs]
    recovered = recover_text_tool_calls(response.content, offered)
    if not recovered:
        return response
    state.emit(
        agent,
        RunEvent(
            "tool_call_recovered",
            agent.key,
            name=recovered[0].name,
            detail="the model wrote its call as text",
            data={"calls": [c.name for c in recovered]},
        ),
    )
    return dataclasses.replace(response, content=None, tool_calls=recovered)


# ---- a reply -----------------------------------------------------------------------------------------------


def _text_reply(state: RunState, agent: Agent, text: str) -> NextStep:
    if not text:
        return NextStepStop(RunError("empty_reply", f"{agent.key} returned neither text nor a tool call"))
    if agent.planning is not None and agent.tool_protocol == "native" and not state.planning_reasked:
        # A planning agent acts and answers only through tools. Plain text is most often a small model
        # answering from nothing ("I can't assist with that"): remind it once, then accept the text.
        state.planning_reasked = True
        state.emit(agent, RunEvent("protocol_error", agent.key, detail="answered without a tool call"))
        state.items.append({"role": "assistant", "content": text})
        state.items.append({"role": "user", "content": planning.TOOL_REMINDER})
        return NextStepRunAgain()
    if (agent.planning is not None and planning.echoes_note(text)) or (
        state.notes and planning.echoes_note(text, state.notes)
    ):
        # Our words to the model ("The customer declined; nothing was done ...") are never the reply.
        return NextStepStop(RunError("malformed_reply", f"{agent.key} repeated an instruction"))
    if agent.structured:
        return _structured_reply(state, agent, text)
    return NextStepFinalOutput(Reply(text))


def _structured_reply(state: RunState, agent: Agent, text: str) -> NextStep:
    """The reply's `response` for the customer and its `reasoning` for the debug log; a reply in no readable
    shape ends the run (people take over) rather than sending raw JSON to a customer."""
    parsed = parse_reply(text)
    state.emit(
        agent,
        RunEvent(
            "structured_reply",
            agent.key,
            detail=parsed.shape,
            data={"shape": parsed.shape, "well_formed": parsed.well_formed},
        ),
    )
    if parsed.shape == "broken":
        return NextStepStop(RunError("malformed_reply", f"{agent.key} returned unreadable JSON"))
    return NextStepFinalOutput(Reply(parsed.text, reasoning=parsed.reasoning))


# ---- calls -------------------------------------------------------------------------------------------------


def _run_calls(state: RunState, agent: Agent, calls: list[ToolCall]) -> NextStep:
    """Each call in order: the loop guard, then a tool, a handoff or a refusal. A step that ends the agent's
    turn (a stop, a last answer-only call) leaves the later calls unanswered and unrun."""
    accepted: tuple[ToolCall, Agent, str] | None = None
    for call in calls:
        arguments, parse_error = parse_arguments(call.arguments)
        key = (call.name, call.arguments if parse_error else json.dumps(arguments, sort_keys=True))
        step = _loop_guard(state, agent, call, key)
        if step is not None:
            return step
        tool = state.tool(agent, call.name)
        if tool is not None:
            step = _tool_call(state, agent, tool, call, key, arguments, parse_error)
            if step is not None:
                return step
            continue
        handoff = agent.handoff(call.name)
        if handoff is not None and handoff.target_key in state.agents:
            # Handoff arguments are read leniently: the only one is an optional free-text reason that feeds no
            # side effect, and refusing a transfer over it would strand the customer with the wrong agent.
            reason = arguments.get("reason") if isinstance(arguments, dict) else None
            reason = reason if isinstance(reason, str) else ""
            if accepted is None:
                target = state.agents[handoff.target_key]
                accepted = (call, target, reason)
                state.add_tool_result(call, f"transferred to {target.key}", agent)
            else:
                _ignore_handoff(state, agent, handoff, call, accepted[1], reason)
            continue
        _refuse(state, agent, call, handoff)
    if accepted is not None:
        call, target, reason = accepted
        _accept_handoff(state, agent, target, call, reason)
        return NextStepHandoff(target)
    return NextStepRunAgain()


def _loop_guard(state: RunState, agent: Agent, call: ToolCall, key: tuple[str, str]) -> NextStep | None:
    """The same call (same tool, same arguments) asked for `loop_limit` times ends the agent's turn."""
    count = state.call_counts.get(key, 0) + 1
    state.call_counts[key] = count
    if count < state.settings.loop_limit:
        return None
    if agent.planning is not None and key in state.answered_calls:
        # It has the result and keeps asking for it: one last call may only write the answer.
        state.emit(agent, RunEvent("tool_refused", agent.key, name=call.name, detail="loop"))
        state.add_tool_result(call, "Not run again: you already have this result.", agent)
        return force_final(state, agent, why=f"{call.name} requested {count} times")
    detail = f"{call.name} requested {count} times with the same arguments"
    return NextStepStop(RunError("loop_detected", detail))


def _tool_call(
    state: RunState,
    agent: Agent,
    tool: Tool,
    call: ToolCall,
    key: tuple[str, str],
    arguments: dict[str, Any],
    parse_error: str | None,
) -> NextStep | None:
    """One call of the agent's own tool; a next step when it ends the agent's turn, else None."""
    if key in state.answered_calls:
        repeat(state, agent, call)
        if agent.planning is not None and call.name not in planning.PLANNING_TOOL_NAMES:
            # It has the result and asks for it again: one last call may only write the answer.
            return force_final(state, agent, why=f"{call.name} requested again")
        return None
    outcome = execute_tool(state, agent, tool, call, arguments, parse_error)
    last = state.events[-1] if state.events else None
    if last is not None and last.type == "tool_call" and last.data.get("call_id") == call.id:
        state.answered_calls.add(key)
    if outcome is not None:
        # The run is decided (e.g. handed to people): later calls in this response do not run, and a handoff
        # in the same response no longer matters.
        return NextStepStop(outcome)
    return None


def _refuse(state: RunState, agent: Agent, call: ToolCall, handoff: Handoff | None) -> None:
    """A call outside the agent's allowlist: answer it with a refusal and run nothing."""
    allowed = ", ".join(spec["function"]["name"] for spec in state.tool_specs[agent.key]) or "none"
    content = f"refused: unknown tool {call.name!r}. Tools you can call: {allowed}."
    if handoff is not None or call.name.startswith(HANDOFF_PREFIX):
        target = handoff.target_key if handoff is not None else call.name.removeprefix(HANDOFF_PREFIX)
        detail = "target is not in the team" if handoff is not None else "not in the handoff allowlist"
        with state.spans.handoff(agent.key, target, call, "refused") as span:
            state.spans.refused(span)
        state.emit(
            agent,
            RunEvent("handoff_refused", agent.key, name=call.name, detail=detail, data={"to": target}),
        )
    else:
        with state.spans.tool(call) as span:
            state.spans.refused(span)
        state.emit(
            agent,
            RunEvent("tool_refused", agent.key, name=call.name, detail="not in the tool allowlist"),
        )
    state.add_tool_result(call, content, agent)


# ---- handoffs ----------------------------------------------------------------------------------------------


def _accept_handoff(state: RunState, agent: Agent, target: Agent, call: ToolCall, reason: str) -> None:
    with state.spans.handoff(agent.key, target.key, call, "accepted") as span:
        state.spans.handoff_reason(span, reason)
    state.route.append(target.key)
    state.emit(
        agent,
        RunEvent(
            "handoff",
            agent.key,
            name=call.name,
            detail=reason,
            data={"from": agent.key, "to": target.key},
        ),
    )
    state.hooks.on_handoff(state.context, agent, target)


def _ignore_handoff(
    state: RunState, agent: Agent, handoff: Handoff, call: ToolCall, chosen: Agent, reason: str
) -> None:
    """Only the first handoff of a response is honoured (as in the OpenAI Agents SDK)."""
    with state.spans.handoff(agent.key, handoff.target_key, call, "ignored"):
        pass
    state.emit(
        agent,
        RunEvent(
            "handoff_ignored", agent.key, name=call.name, detail=reason, data={"to": handoff.target_key}
        ),
    )
    content = f"ignored: only the first handoff in a response is honoured; transferring to {chosen.key}."
    state.add_tool_result(call, content, agent)


# ---- a planning agent's last call --------------------------------------------------------------------------


def force_final(state: RunState, agent: Agent, *, why: str = "") -> NextStep:
    """The tool budget is spent (or the agent loops on a result it has): one last call that may only write
    the final answer; none ends the run as `tool_budget` (or `loop_detected`)."""
    assert agent.planning is not None
    spent = why or f"{state.tool_calls} tool calls used, the limit is {agent.planning.max_tool_calls}"
    error: ErrorKind = "loop_detected" if why else "tool_budget"
    limited = state.check_limits(agent)
    if limited is not None:
        return limited
    # No tools at all on this call: small models answer from a result they have only when no tool is
    # offered (docs/actions.md), and a model that loops on a tool would call it again.
    state.items.append({"role": "user", "content": planning.FINAL_NOTE})
    try:
        response = call_model(state, agent, [])
    except ModelError as exc:
        return NextStepStop(RunError(error, f"{spent}; the final call failed: {exc.kind}"))
    said = planning.plain_answer(response.content or "")
    offered = [planning.ANSWER_TOOL, *(t.name for t in state.agent_tools(agent))]
    for call in recover_text_tool_calls(said, offered):
        # A call written as text although none was offered: only a final answer's text is usable.
        arguments, _ = parse_arguments(call.arguments)
        answer = arguments.get("answer") if call.name == planning.ANSWER_TOOL else None
        said = answer.strip() if isinstance(answer, str) else ""
        break
    if said and planning.customer_facing(said) and not planning.echoes_note(said):
        if agent.planning is not None and state.context.plan is not None:
            state.context.plan.status = "done"
        return NextStepFinalOutput(Reply(said))
    return NextStepStop(RunError(error, spent))


# ---- false transfer promises -------------------------------------------------------------------------------


def promises_transfer(state: RunState, agent: Agent, text: str) -> bool:
    """The reply announces a transfer (EN/ZH) although the agent called no transfer tool."""
    return bool(_transfer_names(state, agent)) and said_transfer(text)


def reask_for_handoff(state: RunState, agent: Agent, said: NextStepFinalOutput) -> NextStep:
    """The model said it would transfer the customer but called no tool (a false promise): ask once more
    with only the handoff tools and a call required; if it still calls none, the promise becomes a handoff to
    people: a customer told "I'll transfer you now" must not be left waiting for nobody."""
    event = RunEvent("transfer_promised", agent.key, detail=said.output.text[:200])
    kept = NextStepStop(HumanHandoff(reason=PROMISED_TRANSFER))
    if state.check_limits() is not None:
        state.emit(agent, dataclasses.replace(event, data={"result": "to people: no turn left"}))
        return kept
    if agent.tool_protocol == "text":
        state.emit(agent, dataclasses.replace(event, data={"result": "to people: text tool protocol"}))
        return kept
    transfer_names = _transfer_names(state, agent)
    handoff_tools = [s for s in state.tools_for(agent) if s["function"]["name"] in transfer_names]
    try:
        response = call_model(state, agent, handoff_tools, tool_choice="required")
    except ModelError as exc:
        state.emit(agent, dataclasses.replace(event, data={"result": f"to people: {exc.kind}"}))
        return kept
    if not any(c.name in transfer_names for c in response.tool_calls):
        state.emit(agent, dataclasses.replace(event, data={"result": "to people: no handoff on re-ask"}))
        return kept
    state.emit(agent, dataclasses.replace(event, data={"result": "handoff on re-ask"}))
    step = process_model_response(state, agent, response)
    escalated = isinstance(step, NextStepStop) and not isinstance(step.outcome, RunError)
    return step if isinstance(step, NextStepHandoff) or escalated else kept


def _transfer_names(state: RunState, agent: Agent) -> set[str]:
    names = {h.tool_name for h in agent.handoffs}
    escalation_tool = state.settings.escalation_tool
    if escalation_tool and agent.tool(escalation_tool) is not None:
        names.add(escalation_tool)
    return names
