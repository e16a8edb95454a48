"""Tool execution: one function-tool call the model asked for, validated, run and recorded.

- `execute_tool`: validate the arguments against the tool's schema, run the tool (its failure is the call's
  result, never the run's end), count planning progress, and answer the call;
- `hold`: a call that changes something waits for the customer's confirmation, and `settle_answered` runs it
  (or tells the model it was not done) on the customer's next message;
- `repeat`: a call that already succeeded this run is answered with a pointer to the result the model has;
- artifacts: a long output is stored out of the context (`compress`), and an argument naming one gets its
  full text (`with_artifacts`).

Every call gets a result message, whatever happens to it: the Chat Completions API rejects a history with an
unanswered tool call.
"""

from __future__ import annotations

import json
from typing import Any

from opentelemetry.trace import Span

from . import planning, text_protocol
from .model import ToolCall
from .run_state import RunState
from .schemas import validation_error
from .types import (
    Agent,
    Artifact,
    Outcome,
    PendingCall,
    Reply,
    RunError,
    RunEvent,
    Tool,
    ToolFailed,
    ToolOutput,
)


def execute_tool(
    state: RunState,
    agent: Agent,
    tool: Tool,
    call: ToolCall,
    arguments: dict[str, Any],
    parse_error: str | None,
    *,
    confirmed: bool = False,
) -> Outcome | None:
    """Validate, run and record one tool call; return the outcome if the tool ends the run. A tool that
    changes something (`Tool.confirm`) is held for the customer's confirmation unless `confirmed`."""
    if agent.planning is not None and state.since_progress >= agent.planning.no_progress_limit:
        detail = f"no step of the plan was finished in {state.since_progress} tool calls"
        return RunError("loop_detected", detail)
    with state.spans.tool(call) as span:
        if tool.name != planning.SEARCH_ARTIFACT_TOOL:
            arguments = with_artifacts(arguments, state)
        if tool.name != planning.PLAN_TOOL:
            state.tool_calls += 1
        error = parse_error or validation_error(tool.parameters, arguments)
        if error is not None:
            state.since_progress += 1
            content = (
                f"error: invalid arguments for {tool.name}: {error}. Fix the arguments and call it again."
            )
            _record_error(state, agent, call, span, content, "invalid_arguments", error)
            return None
        if tool.confirm is not None and not confirmed:
            return hold(state, agent, tool, call, arguments, span)
        plan = state.context.plan
        done_before = plan.done_count if plan is not None else 0
        steps_before = len(plan.steps) if plan is not None else 0
        returned = _invoke(state, agent, tool, call, arguments, span)
        if returned is None:
            return None
        _count_progress(state, agent, tool, call, arguments, done_before, steps_before)
        content = compress(state, agent, tool, returned.content)
        if (
            agent.planning is not None
            and returned.outcome is None
            and tool.name not in planning.PLANNING_TOOL_NAMES
        ):
            content = f"{content}\n\n{planning.UPDATE_REMINDER}"
        state.add_tool_result(call, content, agent)
        data: dict[str, Any] = {"call_id": call.id, "arguments": arguments, "result": content}
        if confirmed:
            data["confirmed"] = True
        if returned.outcome is not None:
            data["outcome"] = returned.outcome.kind
            state.spans.tool_outcome(span, returned.outcome.kind)
        state.spans.tool_result(span, content)
        state.emit(agent, RunEvent("tool_call", agent.key, name=call.name, data=data))
        state.hooks.on_tool_end(state.context, agent, call, content)
        return returned.outcome


def _invoke(
    state: RunState, agent: Agent, tool: Tool, call: ToolCall, arguments: dict[str, Any], span: Span
) -> ToolOutput | None:
    """The tool's own output; None when it failed (the failure is recorded as the call's result)."""
    try:
        returned = tool.function(state.context, arguments)
    except ToolFailed as exc:
        state.since_progress += 1
        content = f"error: {tool.name} failed: {exc}"
        _record_error(state, agent, call, span, content, "tool_failed", str(exc))
        return None
    except Exception as exc:  # a tool is host code talking to databases and APIs: never crash the run
        state.since_progress += 1
        content = f"error: {tool.name} failed. Do not call it again with the same arguments."
        detail = f"{type(exc).__name__}: {exc}"
        _record_error(state, agent, call, span, content, type(exc).__name__, detail)
        return None
    if isinstance(returned, str):
        return ToolOutput(content=returned)
    if not isinstance(returned, ToolOutput):
        content = f"error: {tool.name} failed."
        detail = f"tool returned {type(returned).__name__}, expected ToolOutput or str"
        _record_error(state, agent, call, span, content, "bad_tool_output", detail)
        return None
    return returned


def _count_progress(
    state: RunState,
    agent: Agent,
    tool: Tool,
    call: ToolCall,
    arguments: dict[str, Any],
    done_before: int,
    steps_before: int,
) -> None:
    """Planning progress after a call that ran: a plan created or a step marked done resets the count of
    calls without progress; any other call adds one. A `think` call's thought is recorded."""
    plan = state.context.plan
    if tool.name == planning.PLAN_TOOL and plan is not None:
        created = steps_before == 0 and bool(plan.steps)
        state.since_progress = 0 if created or plan.done_count > done_before else state.since_progress + 1
        state.emit(agent, RunEvent("plan", agent.key, name=call.name, data={"plan": plan.as_record()}))
    else:
        state.since_progress += 1
    if tool.name == planning.THINK_TOOL:
        state.thought(agent, str(arguments.get("thought", "")), streamed=False)


def _record_error(
    state: RunState,
    agent: Agent,
    call: ToolCall,
    span: Span,
    content: str,
    error_type: str,
    detail: str,
) -> None:
    state.add_tool_result(call, content, agent)
    state.spans.tool_failed(span, error_type, detail, content)
    state.emit(
        agent,
        RunEvent(
            "tool_error",
            agent.key,
            name=call.name,
            detail=detail,
            data={"call_id": call.id, "result": content},
        ),
    )
    state.hooks.on_tool_end(state.context, agent, call, content)


# ---- repeated calls ----------------------------------------------------------------------------------------


def repeat(state: RunState, agent: Agent, call: ToolCall) -> None:
    """The model asked again for a call that already succeeded this run (small models do this instead of
    reading the result: "call A forever"). Nothing is sent again; the model is pointed at the result it has,
    and the next call is made without that tool, so it moves on instead of asking a third time."""
    nxt = "update the plan or call final_answer" if agent.planning is not None else "answer the customer"
    content = (
        f"You already called {call.name} with these arguments; its result is above. Do not call it again: "
        f"use that result and {nxt}."
    )
    state.emit(agent, RunEvent("tool_refused", agent.key, name=call.name, detail="repeated call"))
    state.add_tool_result(call, content, agent)
    state.withheld.add(call.name)


# ---- confirmations -----------------------------------------------------------------------------------------


def hold(
    state: RunState, agent: Agent, tool: Tool, call: ToolCall, arguments: dict[str, Any], span: Span
) -> Outcome:
    """A call that changes something waits for the customer: the run ends with the confirmation question
    (a fixed text, so it costs no credit) and the host keeps the call exactly as asked."""
    assert tool.confirm is not None
    try:
        question = tool.confirm(arguments).strip()
    except Exception:  # a builder's confirmation template that fails must not lose the question
        question = ""
    if not question:
        shown = ", ".join(f"{k}: {v}" for k, v in arguments.items())
        question = f"Please confirm: {tool.name} ({shown}). Reply yes to go ahead or no to cancel."
    state.add_tool_result(call, "Waiting for the customer's confirmation; nothing was done yet.", agent)
    state.spans.tool_outcome(span, "confirmation")
    pending = PendingCall(tool=tool.name, arguments=arguments, question=question, agent_key=agent.key)
    state.emit(
        agent,
        RunEvent(
            "confirmation",
            agent.key,
            name=tool.name,
            detail=question,
            data={"tool": tool.name, "arguments": arguments, "question": question, "status": "asked"},
        ),
    )
    return Reply(question, billable=False, confirmation=pending)


def settle_answered(state: RunState, agent: Agent) -> None:
    """The customer answered a held call: run it exactly as it was asked (confirmed), or tell the model it
    was not done; either way before the first model call, so the model continues from the result."""
    answered = state.context.answered
    if answered is None:
        return
    state.context.answered = None
    owner = agent if state.tool(agent, answered.tool) is not None else None
    if owner is None:
        owner = next((a for a in state.agents.values() if a.tool(answered.tool) is not None), None)
    raw = json.dumps(answered.arguments, ensure_ascii=False)
    call = ToolCall(id="confirmed_call_1", name=answered.tool, arguments=raw)
    state.items.append(_held_call_item(agent, call))
    tool = state.tool(owner, answered.tool) if owner is not None else None
    status = "confirmed" if answered.confirmed and tool is not None else "not run"
    state.emit(
        agent,
        RunEvent(
            "confirmation",
            agent.key,
            name=answered.tool,
            detail=answered.note,
            data={"tool": answered.tool, "arguments": answered.arguments, "status": status},
        ),
    )
    if answered.confirmed and tool is not None and owner is not None:
        execute_tool(state, owner, tool, call, answered.arguments, None, confirmed=True)
        # Done once: the same call asked for again in this run is a repeat, never a second refund.
        key = (call.name, json.dumps(answered.arguments, sort_keys=True))
        state.call_counts[key] = state.call_counts.get(key, 0) + 1
        state.answered_calls.add(key)
        return
    if answered.note:
        state.notes.append(answered.note)
    note = answered.note or "The customer did not confirm; nothing was done."
    if answered.confirmed:
        note = "The customer confirmed, but the tool is no longer available; nothing was done."
    state.add_tool_result(call, note, agent)


def _held_call_item(agent: Agent, call: ToolCall) -> dict[str, Any]:
    """The held call as the assistant asked for it, in the agent's tool protocol."""
    if agent.tool_protocol == "text":
        return text_protocol.assistant_item(f'<action name="{call.name}">{call.arguments}</action>')
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
        ],
    }


# ---- artifacts ---------------------------------------------------------------------------------------------


def compress(state: RunState, agent: Agent, tool: Tool, content: str) -> str:
    """A long output becomes an artifact of the run; the context gets a reference and its beginning."""
    threshold = state.settings.artifact_threshold
    if threshold is None or len(content) <= threshold or tool.name in planning.PLANNING_TOOL_NAMES:
        return content
    artifacts = state.context.artifacts
    ref = f"A{len(artifacts) + 1}"
    artifacts.append(Artifact(ref=ref, tool=tool.name, content=content))
    state.tool_specs.clear()  # search_artifact is offered from now on
    state.emit(
        agent,
        RunEvent(
            "artifact",
            agent.key,
            name=tool.name,
            data={"ref": ref, "tool": tool.name, "size": len(content)},
        ),
    )
    return (
        f"[Stored as artifact {ref}: {len(content)} characters from {tool.name}. It begins: "
        f"{content[:400]} ...]\nCall {planning.SEARCH_ARTIFACT_TOOL} with ref {ref} and what you are looking "
        f'for to read the part you need, or pass "{ref}" as an argument to give a tool the full text.'
    )


def with_artifacts(arguments: dict[str, Any], state: RunState) -> dict[str, Any]:
    """Arguments naming an artifact (`A1` or `artifact:A1`) receive its full text."""
    if not state.context.artifacts:
        return arguments
    texts = {a.ref: a.content for a in state.context.artifacts}
    texts.update({f"artifact:{a.ref}": a.content for a in state.context.artifacts})
    return {k: texts.get(v, v) if isinstance(v, str) else v for k, v in arguments.items()}
