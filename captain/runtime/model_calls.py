"""One model call of a run: the system prompt the agent gets (its instructions, the plan of a planning agent,
the text tool protocol), the settings, the call itself in the agent's tool protocol, and what the run records
of it (usage, the `llm_call` event, the model-call span, `on_llm_end`)."""

from __future__ import annotations

import dataclasses
from typing import Any

from . import planning, text_protocol
from .model import ModelClient, ModelError, ModelResponse, ModelSettings
from .run_state import RunState, tool_specs
from .structured import RESPONSE_FORMAT
from .types import Agent, RunEvent, Usage


def call_model(
    state: RunState,
    agent: Agent,
    tools: list[dict[str, Any]],
    *,
    tool_choice: str | None = None,
) -> ModelResponse:
    """Ask `agent` once, offering `tools`; a failed call is recorded and its `ModelError` raised."""
    state.turns += 1
    context = _turn_context(state, agent)
    messages = [
        {"role": "system", "content": _system_prompt(agent, tools)},
        *([{"role": "system", "content": context}] if context else []),
        *state.history,
        *state.items,
    ]
    provider = getattr(state.settings.model, "provider_name", None)
    with state.spans.llm(agent, state.turns, provider) as span:
        state.spans.llm_request(span, messages)
        try:
            settings = ModelSettings(
                temperature=agent.temperature,
                # A planning step is a tool call or a short answer; a model that rambles past this is
                # stopped rather than left to run into the deadline.
                max_tokens=planning.MAX_STEP_TOKENS if agent.planning is not None else None,
                tool_choice=tool_choice,
                response_format=_reply_format(state, agent, tools),
            )
            client: ModelClient = agent.model_client or state.settings.model
            if agent.tool_protocol == "text" and tools:
                response = _text_turn(state, agent, client, messages, tools, settings)
            else:
                response = client.complete(
                    model=agent.model, messages=messages, tools=tools, settings=settings
                )
        except ModelError as exc:
            state.spans.llm_failed(span, exc)
            state.emit(
                agent,
                RunEvent(
                    "llm_call",
                    agent.key,
                    detail=f"error: {exc}",
                    data={"model": agent.model, "error": exc.kind},
                ),
            )
            raise
        # Counted here, not trusted from the client: one `complete` is one request whatever it retried inside.
        call_usage = Usage(
            requests=1,
            input_tokens=response.usage.input_tokens,
            output_tokens=response.usage.output_tokens,
        )
        state.usage.add(call_usage)
        state.context.usage.add(call_usage)
        state.spans.llm_response(span, response, call_usage)
    state.emit(
        agent,
        RunEvent(
            "llm_call",
            agent.key,
            data={
                "model": response.model,
                "input_tokens": call_usage.input_tokens,
                "output_tokens": call_usage.output_tokens,
                "tool_calls": [call.name for call in response.tool_calls],
            },
        ),
    )
    state.hooks.on_llm_end(state.context, agent, response)
    return response


def fixed_prefix(agent: Agent) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """What every first call of `agent` in a run starts with: its fixed system prompt and its tool schemas. A
    model server that caches prompt prefixes reads only what follows, once it has seen this (a warm-up)."""
    tools = tool_specs(agent.tools, agent)
    native = [] if agent.tool_protocol == "text" else tools
    return [{"role": "system", "content": _system_prompt(agent, tools)}], native


def _system_prompt(agent: Agent, tools: list[dict[str, Any]]) -> str:
    """The part of the prompt that is the same on every turn; the chat template appends the tool schemas."""
    system = agent.instructions
    if agent.tool_protocol == "text" and tools:
        system = f"{system}\n\n{text_protocol.protocol_prompt(tools)}"
    return system


def _turn_context(state: RunState, agent: Agent) -> str:
    """What changes from turn to turn, after the fixed part: the agent's turn context and the plan so far."""
    parts = [agent.context.strip()] if agent.context.strip() else []
    if agent.planning is not None:
        left = max(0, agent.planning.max_tool_calls - state.tool_calls)
        parts.append(planning.planning_prompt(state.context.plan, calls_left=left))
    return "\n\n".join(parts)


def _reply_format(state: RunState, agent: Agent, tools: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The reply schema for the endpoint to enforce, when it can be: always on a call without tools; with
    tools only when `schema_with_tools` (some servers cannot combine a grammar with tool calls: there the
    instructions ask for the shape and the parser reads it)."""
    if not agent.structured or (tools and not state.settings.schema_with_tools):
        return None
    return RESPONSE_FORMAT


def _text_turn(
    state: RunState,
    agent: Agent,
    client: ModelClient,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    settings: ModelSettings,
) -> ModelResponse:
    """One model call in the text tool protocol: thoughts stream live, actions are parsed from the text
    (validated later like native calls), and output that breaks the protocol is re-asked once."""
    offered = [spec["function"]["name"] for spec in tools]
    text_settings = dataclasses.replace(settings, tool_choice=None, response_format=None)

    def on_thought(delta: str) -> None:
        state.hooks.on_thought(state.context, agent, delta)

    response, turn = text_protocol.complete_text_turn(
        client,
        model=agent.model,
        messages=messages,
        settings=text_settings,
        offered=offered,
        on_thought=on_thought,
    )
    if turn.error:
        state.emit(agent, RunEvent("protocol_error", agent.key, detail=turn.error[:500]))
        first = response.usage
        retry = [
            *messages,
            text_protocol.assistant_item(turn.raw),
            text_protocol.reask_message(turn.error),
        ]
        response, turn = text_protocol.complete_text_turn(
            client,
            model=agent.model,
            messages=retry,
            settings=text_settings,
            offered=offered,
            on_thought=on_thought,
        )
        response.usage.add(first)
        if turn.error:
            state.emit(
                agent,
                RunEvent("protocol_error", agent.key, detail=f"after re-ask: {turn.error[:500]}"),
            )
            raise ModelError("bad_response", f"the output broke the text tool protocol twice: {turn.error}")
    state.thought(agent, turn.thought.strip(), streamed=True)
    state.text_raw = turn.raw
    return response
