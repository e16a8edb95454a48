"""The one tracing hook: turns what a turn emits (routing decisions, runner events) into OpenTelemetry spans and
span events, with every name from `semconv`. The debug log and the runs API read these spans."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import TracerProvider

from . import semconv as sc
from .hooks import RunHooks
from .knowledge import KnowledgeStep
from .model import ModelResponse, ToolCall
from .routing import Decision
from .team import TeamHooks
from .types import Agent, RunContext, RunEvent

# Span events of the planning mode and the text protocol. (Kept here until they move to `semconv`, where the
# rest of the vocabulary lives; the debug log reads them from this module.)
EVENT_THOUGHT = "captain.thought"
"""The model's visible reasoning of one model call (a text-protocol `Thought:`, a `think` note)."""
EVENT_PLAN = "captain.plan"
"""A planning agent's todo list after a change (created, updated, a step done, waiting, done)."""
EVENT_ARTIFACT = "captain.artifact"
"""A long tool output stored as an artifact and replaced in the context by its reference."""
EVENT_CONFIRMATION = "captain.confirmation"
"""A side-effecting call held for the customer's confirmation (asked) or decided (confirmed/declined/lapsed)."""
EVENT_PROTOCOL_ERROR = "captain.protocol_error"
"""The model's text-protocol output did not parse (the runtime re-asks once)."""

CAPTAIN_THOUGHT_TEXT = "captain.thought.text"
"""Only when content recording is on."""
CAPTAIN_THOUGHT_CHARS = "captain.thought.chars"
"""The thought's length, in its place when content recording is off."""
CAPTAIN_PLAN_ACTION = "captain.plan.action"
CAPTAIN_PLAN_STATUS = "captain.plan.status"
CAPTAIN_PLAN_STEPS_DONE = "captain.plan.steps_done"
CAPTAIN_PLAN_STEPS_TOTAL = "captain.plan.steps_total"
CAPTAIN_PLAN_TOOL_CALLS = "captain.plan.tool_calls"
CAPTAIN_PLAN_STATE = "captain.plan.state"
"""`PlanState.as_record()` as JSON (goal and step texts: only when content recording is on)."""
CAPTAIN_ARTIFACT_REF = "captain.artifact.ref"
CAPTAIN_ARTIFACT_TOOL = "captain.artifact.tool"
CAPTAIN_ARTIFACT_SIZE = "captain.artifact.size"
CAPTAIN_CONFIRMATION_TOOL = "captain.confirmation.tool"
CAPTAIN_CONFIRMATION_STATUS = "captain.confirmation.status"
CAPTAIN_CONFIRMATION_QUESTION = "captain.confirmation.question"
"""Only when content recording is on."""
CAPTAIN_CONFIRMATION_ARGUMENTS = "captain.confirmation.arguments"
"""JSON of the held call's arguments (only when content recording is on)."""
CAPTAIN_PROTOCOL_ERROR = "captain.protocol_error.detail"


class TracingHooks(RunHooks, TeamHooks):
    """Spans for routing decisions (`captain.router`, one per decision) and span events for runner events the
    spans of the loop do not already show (a transfer promised but not made)."""

    def __init__(self, *, record_content: bool = True, tracer_provider: TracerProvider | None = None) -> None:
        self.record_content = record_content
        self._tracer = trace.get_tracer(sc.TRACER_NAME, tracer_provider=tracer_provider)
        self._thought: dict[str, list[str]] = {}
        """Streamed thought pieces per agent, not yet written as a span event."""

    # ---- thoughts: streamed in pieces, written as one span event per model call ------------------------------

    def on_thought(self, context: RunContext, agent: Agent, delta: str) -> None:
        """Pieces are collected, not written one by one: a span event per token would bury the log. They are
        written when the run's `thought` event closes the model call, or at the next step if none comes."""
        if delta:
            self._thought.setdefault(agent.key, []).append(delta)

    def _write_thought(self, agent_key: str, text: str) -> None:
        text = text.strip()
        if not text:
            return
        attributes: dict[str, Any] = {sc.GEN_AI_AGENT_ID: agent_key}
        if self.record_content:
            attributes[CAPTAIN_THOUGHT_TEXT] = text
        else:
            attributes[CAPTAIN_THOUGHT_CHARS] = len(text)
        trace.get_current_span().add_event(EVENT_THOUGHT, attributes=attributes)

    def _flush_thought(self, agent_key: str) -> None:
        pieces = self._thought.pop(agent_key, None)
        if pieces:
            self._write_thought(agent_key, "".join(pieces))

    def on_llm_end(self, context: RunContext, agent: Agent, response: ModelResponse) -> None:
        self._flush_thought(agent.key)

    def on_tool_end(self, context: RunContext, agent: Agent, call: ToolCall, result: str) -> None:
        self._flush_thought(agent.key)

    def on_handoff(self, context: RunContext, from_agent: Agent, to_agent: Agent) -> None:
        self._flush_thought(from_agent.key)

    def on_decision(self, decision: Decision) -> None:
        """One finished span per decision (started and ended now; its latency is an attribute)."""
        with self._tracer.start_as_current_span(
            sc.SPAN_ROUTER, attributes=self._decision_attributes(decision)
        ):
            pass

    def on_knowledge(self, step: KnowledgeStep) -> None:
        """One finished span per knowledge step (the answer's own spans follow it in the trace)."""
        attributes: dict[str, Any] = {
            sc.GEN_AI_AGENT_ID: step.node,
            sc.CAPTAIN_KNOWLEDGE_ACTION: step.action,
            sc.CAPTAIN_KNOWLEDGE_SOURCES: json.dumps(step.records(), ensure_ascii=False),
            sc.CAPTAIN_KNOWLEDGE_UNSUPPORTED: json.dumps(step.unsupported, ensure_ascii=False),
        }
        if step.retrieval is not None:
            attributes[sc.CAPTAIN_KNOWLEDGE_BEST_SCORE] = round(step.retrieval.best_score, 3)
            attributes[sc.CAPTAIN_KNOWLEDGE_LATENCY_MS] = round(step.retrieval.latency_ms, 1)
        if step.verdict:
            attributes[sc.CAPTAIN_KNOWLEDGE_VERDICT] = step.verdict
        if self.record_content and step.query:
            attributes[sc.CAPTAIN_KNOWLEDGE_QUERY] = step.query
        if self.record_content and step.faq_left_out:
            attributes[sc.CAPTAIN_KNOWLEDGE_FAQ_LEFT_OUT] = ", ".join(step.faq_left_out)
        if self.record_content and step.evidence:
            attributes[sc.CAPTAIN_KNOWLEDGE_EVIDENCE] = json.dumps(
                [
                    {"source": e.number, "text": e.unit.full, "score": round(e.score, 3)}
                    for e in step.evidence
                ],
                ensure_ascii=False,
            )
        with self._tracer.start_as_current_span(sc.SPAN_KNOWLEDGE, attributes=attributes):
            pass

    def on_event(self, context: RunContext, agent: Agent, event: RunEvent) -> None:
        if event.type == "thought":
            self._thought.pop(agent.key, None)
            self._write_thought(agent.key, str(event.data.get("text") or event.detail or ""))
            return
        if event.type in _ACTION_EVENTS:
            self._flush_thought(agent.key)
            trace.get_current_span().add_event(
                _ACTION_EVENTS[event.type], attributes=self._action_attributes(agent, event)
            )
            return
        if event.type == "structured_reply":
            trace.get_current_span().add_event(
                sc.EVENT_STRUCTURED_REPLY,
                attributes={
                    sc.GEN_AI_AGENT_ID: agent.key,
                    sc.CAPTAIN_REPLY_SHAPE: str(event.data.get("shape", "")),
                    sc.CAPTAIN_REPLY_WELL_FORMED: bool(event.data.get("well_formed")),
                },
            )
            return
        if event.type != "transfer_promised":
            return
        attributes: dict[str, Any] = {
            sc.GEN_AI_AGENT_ID: agent.key,
            sc.CAPTAIN_TRANSFER_RESULT: str(event.data.get("result", "")),
        }
        if self.record_content and event.detail:
            attributes[sc.CAPTAIN_TRANSFER_TEXT] = event.detail
        # The current span is the agent's own span: the promise shows under the agent that made it.
        trace.get_current_span().add_event(sc.EVENT_TRANSFER_PROMISED, attributes=attributes)

    def _action_attributes(self, agent: Agent, event: RunEvent) -> dict[str, Any]:
        """Attributes of a plan/artifact/confirmation/protocol_error event. Only what the event names is
        written: tool auth secrets never reach the runtime's events (custom tools add them at the request)."""
        data = event.data
        attributes: dict[str, Any] = {sc.GEN_AI_AGENT_ID: agent.key}
        if event.type == "plan":
            raw = data.get("plan")
            plan: dict[str, Any] = raw if isinstance(raw, dict) else {}
            steps = plan.get("steps") or []
            attributes[CAPTAIN_PLAN_ACTION] = str(data.get("action") or event.name or event.detail or "")
            attributes[CAPTAIN_PLAN_STATUS] = str(plan.get("status", ""))
            attributes[CAPTAIN_PLAN_STEPS_DONE] = sum(
                1 for s in steps if isinstance(s, dict) and s.get("done")
            )
            attributes[CAPTAIN_PLAN_STEPS_TOTAL] = len(steps)
            attributes[CAPTAIN_PLAN_TOOL_CALLS] = int(plan.get("tool_calls") or 0)
            if self.record_content:
                attributes[CAPTAIN_PLAN_STATE] = json.dumps(plan, ensure_ascii=False, default=str)
        elif event.type == "artifact":
            attributes[CAPTAIN_ARTIFACT_REF] = str(data.get("ref", ""))
            attributes[CAPTAIN_ARTIFACT_TOOL] = str(data.get("tool", ""))
            attributes[CAPTAIN_ARTIFACT_SIZE] = int(data.get("size") or 0)
        elif event.type == "confirmation":
            attributes[CAPTAIN_CONFIRMATION_TOOL] = str(data.get("tool") or event.name or "")
            attributes[CAPTAIN_CONFIRMATION_STATUS] = str(data.get("status", ""))
            if self.record_content:
                attributes[CAPTAIN_CONFIRMATION_QUESTION] = str(data.get("question", ""))
                attributes[CAPTAIN_CONFIRMATION_ARGUMENTS] = json.dumps(
                    data.get("arguments", {}), ensure_ascii=False, default=str
                )
        elif event.type == "protocol_error":
            # The parse error says what was wrong with the output; the output itself is content.
            attributes[CAPTAIN_PROTOCOL_ERROR] = event.detail[:1000]
        return attributes

    def _decision_attributes(self, decision: Decision) -> dict[str, Any]:
        attributes: dict[str, Any] = {
            sc.CAPTAIN_ROUTER_STRATEGY: decision.mode,
            sc.CAPTAIN_ROUTER_CANDIDATES: list(decision.candidates),
            sc.CAPTAIN_ROUTER_DECISION: decision.target,
            sc.CAPTAIN_ROUTER_NODE: decision.node,
            sc.CAPTAIN_ROUTER_PHASE: decision.phase,
            sc.CAPTAIN_ROUTER_REASON: decision.reason,
            sc.CAPTAIN_ROUTER_REFUSED: decision.refused,
            sc.CAPTAIN_ROUTER_LATENCY_MS: round(decision.latency_ms, 1),
            sc.GEN_AI_USAGE_INPUT_TOKENS: decision.input_tokens,
            sc.GEN_AI_USAGE_OUTPUT_TOKENS: decision.output_tokens,
        }
        if decision.model:
            attributes[sc.GEN_AI_REQUEST_MODEL] = decision.model
        if decision.parsed is not None:
            attributes[sc.CAPTAIN_ROUTER_PARSED] = decision.parsed
        if decision.scores:
            attributes[sc.CAPTAIN_ROUTER_SCORES] = json.dumps(decision.scores)
        if self.record_content:
            if decision.prompt:
                attributes[sc.CAPTAIN_ROUTER_PROMPT] = decision.prompt
            if decision.raw_output:
                attributes[sc.CAPTAIN_ROUTER_RAW_OUTPUT] = decision.raw_output
        return attributes


_ACTION_EVENTS = {
    "plan": EVENT_PLAN,
    "artifact": EVENT_ARTIFACT,
    "confirmation": EVENT_CONFIRMATION,
    "protocol_error": EVENT_PROTOCOL_ERROR,
}
