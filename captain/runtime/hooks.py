"""What the runner tells the world while it runs: the `RunHooks` callbacks a host implements, `FanOutHooks` to put
several behind the one `hooks` slot of a `Runner`, and `RunSpans`, the runner's own OpenTelemetry spans.

The run loop reaches OpenTelemetry only through `RunSpans`: which spans a run writes, their names, attributes and
statuses, and what `record_content` keeps out of them, are all here (the span events that other hooks add to
these spans are in `tracing`)."""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode, Tracer

from . import semconv as sc
from .model import ModelError, ModelResponse, ToolCall
from .types import Agent, RunContext, RunError, RunEvent, RunResult, Usage


class RunHooks:
    """Lifecycle callbacks for cross-cutting host work (metrics, debug log, cancellation). Every method is a
    no-op.

    Hooks run inline in the loop; an exception raised by a hook is a host bug and propagates out of `run`.
    """

    def on_agent_start(self, context: RunContext, agent: Agent) -> None:
        """An agent takes control (the starting agent, or the target of a handoff)."""

    def on_llm_end(self, context: RunContext, agent: Agent, response: ModelResponse) -> None:
        """A model call answered (not called when it failed)."""

    def on_tool_end(self, context: RunContext, agent: Agent, call: ToolCall, result: str) -> None:
        """A function tool ran (or failed, or was refused); `result` is the text the model gets back."""

    def on_handoff(self, context: RunContext, from_agent: Agent, to_agent: Agent) -> None:
        """Control passes from one agent to another."""

    def on_event(self, context: RunContext, agent: Agent, event: RunEvent) -> None:
        """The run recorded an event (`RunResult.events` gets the same ones, in the same order)."""

    def on_thought(self, context: RunContext, agent: Agent, delta: str) -> None:
        """A piece of the model's visible reasoning (a text-protocol `Thought:` streamed as it is written, a
        planning agent's `think` note): for the playground and the debug log, never for the customer."""


class FanOutHooks(RunHooks):
    """Calls each hook in order for every `RunHooks` method. A hook's exception propagates (a host bug, as for a
    single hook); hooks that must never break a run (the live publisher) swallow their own errors."""

    def __init__(self, *hooks: RunHooks) -> None:
        self.hooks: tuple[RunHooks, ...] = hooks

    def on_agent_start(self, context: RunContext, agent: Agent) -> None:
        for hook in self.hooks:
            hook.on_agent_start(context, agent)

    def on_llm_end(self, context: RunContext, agent: Agent, response: ModelResponse) -> None:
        for hook in self.hooks:
            hook.on_llm_end(context, agent, response)

    def on_tool_end(self, context: RunContext, agent: Agent, call: ToolCall, result: str) -> None:
        for hook in self.hooks:
            hook.on_tool_end(context, agent, call, result)

    def on_handoff(self, context: RunContext, from_agent: Agent, to_agent: Agent) -> None:
        for hook in self.hooks:
            hook.on_handoff(context, from_agent, to_agent)

    def on_event(self, context: RunContext, agent: Agent, event: RunEvent) -> None:
        for hook in self.hooks:
            hook.on_event(context, agent, event)

    def on_thought(self, context: RunContext, agent: Agent, delta: str) -> None:
        for hook in self.hooks:
            hook.on_thought(context, agent, delta)


class RunSpans:
    """The spans of one run: an agent span per activation, and inside it a span per model call, tool call and
    handoff. `record_content` off keeps message bodies, tool arguments, results and error details out."""

    def __init__(self, tracer: Tracer, *, record_content: bool) -> None:
        self._tracer = tracer
        self.record_content = record_content

    # ---- agents --------------------------------------------------------------------------------------------

    def agent(self, agent: Agent, context: RunContext) -> AbstractContextManager[Span]:
        attributes: dict[str, Any] = {
            sc.GEN_AI_OPERATION_NAME: sc.OP_INVOKE_AGENT,
            sc.GEN_AI_AGENT_ID: agent.key,
            sc.GEN_AI_AGENT_NAME: agent.name,
            sc.CAPTAIN_ACCOUNT_ID: context.account_id,
        }
        if context.conversation_id is not None:
            attributes[sc.CAPTAIN_CONVERSATION_ID] = context.conversation_id
        return self._tracer.start_as_current_span(sc.SPAN_AGENT, attributes=attributes)

    @staticmethod
    def agent_failed(span: Span, error: str) -> None:
        span.set_status(Status(StatusCode.ERROR, error))
        span.set_attribute(sc.ERROR_TYPE, error)

    # ---- model calls ---------------------------------------------------------------------------------------

    def llm(self, agent: Agent, turn: int, provider: object) -> AbstractContextManager[Span]:
        attributes: dict[str, Any] = {
            sc.GEN_AI_OPERATION_NAME: sc.OP_CHAT,
            sc.GEN_AI_REQUEST_MODEL: agent.model,
            sc.GEN_AI_REQUEST_TEMPERATURE: agent.temperature,
            sc.GEN_AI_AGENT_ID: agent.key,
            sc.CAPTAIN_AGENT_TURN: turn,
        }
        if isinstance(provider, str):
            attributes[sc.GEN_AI_PROVIDER_NAME] = provider
            attributes[sc.GEN_AI_SYSTEM] = provider
        # Exceptions are recorded by hand (`llm_failed`); the automatic record would copy them a second time.
        return self._tracer.start_as_current_span(
            sc.SPAN_LLM, attributes=attributes, record_exception=False, set_status_on_exception=False
        )

    def llm_request(self, span: Span, messages: list[dict[str, Any]]) -> None:
        if span.is_recording() and self.record_content:
            span.set_attribute(sc.GEN_AI_INPUT_MESSAGES, _json(_without_image_data(messages)))

    @staticmethod
    def llm_failed(span: Span, exc: ModelError) -> None:
        span.set_status(Status(StatusCode.ERROR, str(exc)))
        span.set_attribute(sc.ERROR_TYPE, exc.kind)
        span.set_attribute(sc.CAPTAIN_LLM_ERROR, exc.kind)

    def llm_response(self, span: Span, response: ModelResponse, usage: Usage) -> None:
        if not span.is_recording():
            return
        span.set_attribute(sc.GEN_AI_RESPONSE_MODEL, response.model)
        span.set_attribute(sc.GEN_AI_USAGE_INPUT_TOKENS, usage.input_tokens)
        span.set_attribute(sc.GEN_AI_USAGE_OUTPUT_TOKENS, usage.output_tokens)
        span.set_attribute(sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, usage.cached_input_tokens)
        if response.finish_reason:
            span.set_attribute(sc.GEN_AI_RESPONSE_FINISH_REASONS, [response.finish_reason])
        if response.response_id:
            span.set_attribute(sc.GEN_AI_RESPONSE_ID, response.response_id)
        if self.record_content:
            output = response.raw if response.raw is not None else assistant_message(response)
            span.set_attribute(sc.GEN_AI_OUTPUT_MESSAGES, _json(output))

    # ---- tools and handoffs --------------------------------------------------------------------------------

    def tool(self, call: ToolCall) -> AbstractContextManager[Span]:
        attributes = {
            sc.GEN_AI_OPERATION_NAME: sc.OP_EXECUTE_TOOL,
            sc.GEN_AI_TOOL_NAME: call.name,
            sc.GEN_AI_TOOL_CALL_ID: call.id,
            sc.GEN_AI_TOOL_TYPE: sc.TOOL_TYPE_FUNCTION,
        }
        if self.record_content:
            attributes[sc.CAPTAIN_TOOL_ARGUMENTS] = call.arguments
        return self._tracer.start_as_current_span(sc.SPAN_TOOL, attributes=attributes)

    def tool_failed(self, span: Span, error_type: str, detail: str, content: str) -> None:
        span.set_status(Status(StatusCode.ERROR, error_type))
        span.set_attribute(sc.ERROR_TYPE, error_type)
        # The detail may quote customer data (an exception message, an argument value): content rules apply.
        span.set_attribute(sc.CAPTAIN_TOOL_ERROR, detail if self.record_content else error_type)
        if self.record_content:
            span.set_attribute(sc.CAPTAIN_TOOL_RESULT, content)

    @staticmethod
    def tool_outcome(span: Span, kind: str) -> None:
        span.set_attribute(sc.CAPTAIN_TOOL_OUTCOME, kind)

    def tool_result(self, span: Span, content: str) -> None:
        if self.record_content and span.is_recording():
            span.set_attribute(sc.CAPTAIN_TOOL_RESULT, content)

    @staticmethod
    def refused(span: Span) -> None:
        span.set_attribute(sc.CAPTAIN_TOOL_REFUSED, True)

    def handoff(
        self, from_key: str, to_key: str, call: ToolCall, status: str
    ) -> AbstractContextManager[Span]:
        attributes = {
            sc.CAPTAIN_HANDOFF_FROM: from_key,
            sc.CAPTAIN_HANDOFF_TO: to_key,
            sc.CAPTAIN_HANDOFF_STATUS: status,
            sc.GEN_AI_TOOL_NAME: call.name,
            sc.GEN_AI_TOOL_CALL_ID: call.id,
        }
        return self._tracer.start_as_current_span(sc.SPAN_HANDOFF, attributes=attributes)

    def handoff_reason(self, span: Span, reason: str) -> None:
        if reason and self.record_content:
            span.set_attribute(sc.CAPTAIN_HANDOFF_REASON, reason)

    # ---- the run -------------------------------------------------------------------------------------------

    @staticmethod
    def annotate_run(result: RunResult, turns: int) -> None:
        """The route, outcome and usage totals, on the caller's own run span (the current span)."""
        span = trace.get_current_span()
        if not span.is_recording():
            return
        span.set_attribute(sc.CAPTAIN_RUN_ROUTE, result.route)
        span.set_attribute(sc.CAPTAIN_RUN_AGENT, result.agent_key)
        span.set_attribute(sc.CAPTAIN_RUN_OUTCOME, result.outcome.kind)
        span.set_attribute(sc.CAPTAIN_RUN_TURNS, turns)
        span.set_attribute(sc.CAPTAIN_USAGE_REQUESTS, result.usage.requests)
        span.set_attribute(sc.CAPTAIN_USAGE_INPUT_TOKENS, result.usage.input_tokens)
        span.set_attribute(sc.CAPTAIN_USAGE_OUTPUT_TOKENS, result.usage.output_tokens)
        if isinstance(result.outcome, RunError):
            span.set_attribute(sc.CAPTAIN_RUN_ERROR, result.outcome.error)


def assistant_message(response: ModelResponse) -> dict[str, Any]:
    """The response as a Chat Completions assistant message (what the model said, its calls included)."""
    message: dict[str, Any] = {"role": "assistant", "content": response.content}
    if response.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in response.tool_calls
        ]
    return message


def _without_image_data(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` with each inline image's data URL cut to its media type: a span holds what the model was
    shown, not megabytes of base64."""

    def part(p: Any) -> Any:
        url = p.get("image_url", {}).get("url", "") if isinstance(p, dict) else ""
        if isinstance(url, str) and url.startswith("data:"):
            return {**p, "image_url": {**p["image_url"], "url": url.split(",", 1)[0] + ",(elided)"}}
        return p

    return [
        {**m, "content": [part(p) for p in m["content"]]} if isinstance(m.get("content"), list) else m
        for m in messages
    ]


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
