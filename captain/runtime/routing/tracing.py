"""Routing decisions as spans (`captain.router`), so the debug log shows them next to the agents' calls."""

from __future__ import annotations

import json

from opentelemetry import trace
from opentelemetry.trace import TracerProvider

from .. import semconv as sc
from .decision import Decision

ROUTER_PHASE = "captain.router.phase"
ROUTER_NODE = "captain.router.node"
ROUTER_REASON = "captain.router.reason"
ROUTER_PROMPT = "captain.router.prompt"
ROUTER_RAW_OUTPUT = "captain.router.raw_output"
ROUTER_PARSED = "captain.router.parsed"
ROUTER_REFUSED = "captain.router.refused"
ROUTER_SCORES = "captain.router.scores"
ROUTER_LATENCY_MS = "captain.router.latency_ms"


def record_decision(
    decision: Decision, *, record_content: bool = True, tracer_provider: TracerProvider | None = None
) -> None:
    """One finished span per decision (started and ended now; its latency is an attribute)."""
    tracer = trace.get_tracer(sc.TRACER_NAME, tracer_provider=tracer_provider)
    attributes: dict[str, object] = {
        sc.CAPTAIN_ROUTER_STRATEGY: decision.mode,
        sc.CAPTAIN_ROUTER_CANDIDATES: list(decision.candidates),
        sc.CAPTAIN_ROUTER_DECISION: decision.target,
        ROUTER_NODE: decision.node,
        ROUTER_PHASE: decision.phase,
        ROUTER_REASON: decision.reason,
        ROUTER_REFUSED: decision.refused,
        ROUTER_LATENCY_MS: round(decision.latency_ms, 1),
        sc.GEN_AI_USAGE_INPUT_TOKENS: decision.input_tokens,
        sc.GEN_AI_USAGE_OUTPUT_TOKENS: decision.output_tokens,
    }
    if decision.model:
        attributes[sc.GEN_AI_REQUEST_MODEL] = decision.model
    if decision.parsed is not None:
        attributes[ROUTER_PARSED] = decision.parsed
    if decision.scores:
        attributes[ROUTER_SCORES] = json.dumps(decision.scores)
    if record_content:
        if decision.prompt:
            attributes[ROUTER_PROMPT] = decision.prompt
        if decision.raw_output:
            attributes[ROUTER_RAW_OUTPUT] = decision.raw_output
    with tracer.start_as_current_span(sc.SPAN_ROUTER, attributes=attributes):
        pass
