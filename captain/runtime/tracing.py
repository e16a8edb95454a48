"""The one tracing hook: turns what a turn emits (routing decisions, runner events) into OpenTelemetry spans and
span events, with every name from `semconv`. The debug log and the runs API read these spans."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import TracerProvider

from . import semconv as sc
from .knowledge import KnowledgeStep
from .routing import Decision
from .runner import RunHooks
from .team import TeamHooks
from .types import Agent, RunContext, RunEvent


class TracingHooks(RunHooks, TeamHooks):
    """Spans for routing decisions (`captain.router`, one per decision) and span events for runner events the
    spans of the loop do not already show (a transfer promised but not made)."""

    def __init__(self, *, record_content: bool = True, tracer_provider: TracerProvider | None = None) -> None:
        self.record_content = record_content
        self._tracer = trace.get_tracer(sc.TRACER_NAME, tracer_provider=tracer_provider)

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
        with self._tracer.start_as_current_span(sc.SPAN_KNOWLEDGE, attributes=attributes):
            pass

    def on_event(self, context: RunContext, agent: Agent, event: RunEvent) -> None:
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
