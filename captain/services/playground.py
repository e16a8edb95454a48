"""The playground: an administrator talks to an assistant (or straight to one scenario) without a customer.

Same team, same Runner, same spans as a real run, so the debug log reads the same; but nothing reaches a
customer and nothing is billed: no Conversation, Message, Run or ledger row is written. The tools see
`conversation_id=None` and `dry_run=True` and only describe what they would do (captain.tools.builtin).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace

from ..agents import build_team
from ..conf import captain_setting
from ..models import TRIAGE_KEY, Assistant, Scenario
from ..prompts import PromptTemplateError
from ..runtime import HumanHandoff, Outcome, Reply, Resolve, RunContext, RunError, Runner
from ..runtime import semconv as sc
from .model_endpoints import EndpointUnavailable, chat_model_for, default_chat_model, endpoint_and_model
from .outcomes import ERROR_REASONS, error_reason

logger = logging.getLogger(__name__)
tracer = trace.get_tracer("captain")

PLAYGROUND_ATTRIBUTE = "captain.playground"
"""Set (true) on the run span of a playground run, so telemetry backends can tell it from customer traffic."""


@dataclass(frozen=True)
class PlaygroundTurn:
    """What one playground message produced."""

    outcome: str
    """reply, human_handoff, resolve or error (the outcome's kind)."""
    text: str
    """What the customer would have been sent."""
    agent_key: str
    """Agent in charge at the end: the next playground message starts there, as in a real conversation."""
    agent_name: str
    route: list[str]
    trace_id: str
    detail: str = ""
    """Handoff reason or error detail (for the admin, never for a customer)."""
    input_tokens: int = 0
    output_tokens: int = 0
    duration_ms: int = 0
    agent_names: dict[str, str] = field(default_factory=dict)


def playground_agents(assistant: Assistant) -> dict[str, str]:
    """Agent key -> name of the assistant's team (where a playground conversation may start). Read from the rows,
    not by building the team, so a stored template that no longer renders cannot break the page."""
    scenarios = Scenario.objects.filter(assistant=assistant, enabled=True).order_by("id")
    return {TRIAGE_KEY: assistant.name, **dict(scenarios.values_list("key", "title"))}


def _customer_text(outcome: Outcome, assistant: Assistant) -> tuple[str, str]:
    """(text the customer would get, internal detail), mirroring `outcomes.outcome_apply`."""
    if isinstance(outcome, Reply):
        return outcome.text, ""
    if isinstance(outcome, HumanHandoff):
        return assistant.handoff_message, outcome.reason
    if isinstance(outcome, Resolve):
        return assistant.resolution_message, outcome.reason
    if outcome.error == "model_unavailable":
        return assistant.handoff_message, error_reason(outcome)
    reason = ERROR_REASONS.get(outcome.error, outcome.error)
    return assistant.handoff_message, f"{reason} {outcome.detail}".strip()


def playground_run(
    *, assistant: Assistant, start_key: str, history: list[dict[str, Any]], message: str
) -> PlaygroundTurn:
    """Answer `message` after `history` (user/assistant chat turns), starting at `start_key`.

    Charges nothing: there is no reply message for a ledger row to pay for, and the run span says
    `captain.credit_used = false`.
    """
    unavailable: Outcome | None = None  # why the run cannot start (shown as production would hand over)
    try:
        endpoint, model = endpoint_and_model(
            account_id=assistant.account_id, endpoint=assistant.model_endpoint, model=assistant.model
        )
    except EndpointUnavailable as exc:
        endpoint, model, unavailable = None, "", RunError(error="model_unavailable", detail=str(exc))
    try:
        team = build_team(assistant, model=model)
    except PromptTemplateError as exc:
        # A template stored before the static check existed: show why, as production would hand over.
        team = {}
        unavailable = unavailable or HumanHandoff(reason=str(exc))
    names = {key: agent.name for key, agent in team.items()} or playground_agents(assistant)
    if start_key not in team:
        start_key = TRIAGE_KEY
    runner = Runner(
        chat_model_for(endpoint) if endpoint else default_chat_model(),
        max_turns=max(1, min(assistant.max_turns, captain_setting("MAX_TURNS_CAP"))),
        deadline_seconds=captain_setting("RUN_DEADLINE_SECONDS"),
        # The playground exists to show what the model saw and said: content is always recorded here.
        record_content=True,
    )
    context = RunContext(
        account_id=assistant.account_id,
        conversation_id=None,
        extra={"assistant_id": assistant.id, "dry_run": True},
    )
    messages = [*history, {"role": "user", "content": message}]
    started = time.monotonic()
    with tracer.start_as_current_span(sc.SPAN_RUN) as span:
        span.set_attribute(sc.CAPTAIN_ACCOUNT_ID, assistant.account_id)
        span.set_attribute(sc.CAPTAIN_ASSISTANT_ID, assistant.id)
        span.set_attribute(PLAYGROUND_ATTRIBUTE, True)
        trace_id = format(span.get_span_context().trace_id, "032x")
        route = [start_key]
        agent_key = start_key
        input_tokens = output_tokens = 0
        outcome: Outcome
        try:
            if unavailable is not None:
                outcome = unavailable
            else:
                result = runner.run(agents=team, start_key=start_key, messages=messages, context=context)
                outcome = result.outcome
            route, agent_key = result.route, result.agent_key
            input_tokens, output_tokens = result.usage.input_tokens, result.usage.output_tokens
        except Exception as exc:  # an admin must see the failure in the page, not a 500
            logger.exception("playground run for assistant %s failed", assistant.id)
            span.record_exception(exc)
            outcome = RunError(error="internal_error", detail=type(exc).__name__)
        span.set_attribute(sc.CAPTAIN_RUN_OUTCOME, outcome.kind)
        span.set_attribute(sc.CAPTAIN_CREDIT_USED, False)
    text, detail = _customer_text(outcome, assistant)
    return PlaygroundTurn(
        outcome=outcome.kind,
        text=text,
        agent_key=agent_key if outcome.kind == "reply" else start_key,
        agent_name=names.get(agent_key, agent_key),
        route=list(route),
        trace_id=trace_id,
        detail=detail,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        duration_ms=int((time.monotonic() - started) * 1000),
        agent_names=names,
    )
