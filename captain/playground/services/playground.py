"""The playground: an administrator talks to an assistant (or straight to one scenario) without a customer.

A playground turn runs in a worker, through the same `runner_for` as a customer's message (same team, same
routing, same Runner, same spans), so the playground shows what production does; the page follows its progress.
Nothing reaches a customer and nothing is billed: no Conversation, Message, Run or ledger row is written. The
tools see `conversation_id=None` and `dry_run=True` and only describe what they would do (captain.actions.services.tools.builtin).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone
from opentelemetry import trace

from captain.actions.services.shortcuts import shortcut_for_message, shortcut_reply_result
from captain.answering.services.live import live_end, playground_scope
from captain.answering.services.outcomes import ERROR_REASONS, error_reason
from captain.answering.services.team import runner_for, team_model_for
from captain.answering.services.turn_context import turn_facts
from captain.assistants.models import TRIAGE_KEY, Assistant, Scenario
from captain.assistants.services.model_endpoints import EndpointUnavailable
from captain.playground.models import PlaygroundRun
from captain.prompts import PromptTemplateError
from captain.queue import task
from captain.runtime import HumanHandoff, Outcome, Reply, Resolve, RunContext, RunError, RunResult
from captain.runtime import semconv as sc
from captain.runtime.routing import Decision
from captain.runtime.team import TeamHooks, TeamRunner, TurnInput

logger = logging.getLogger(__name__)
tracer = trace.get_tracer("captain")

PLAYGROUND_KEEP_SECONDS = 24 * 3600
"""Finished or abandoned playground rows older than this are deleted when a new turn is requested."""


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
    sources: list[dict[str, Any]] = field(default_factory=list)
    """The knowledge put before the model, each marked `cited` when the reply used it."""


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
        return outcome.customer_message or assistant.handoff_message, outcome.reason
    if isinstance(outcome, Resolve):
        return assistant.resolution_message, outcome.reason
    if outcome.error == "model_unavailable":
        return assistant.handoff_message, error_reason(outcome)
    reason = ERROR_REASONS.get(outcome.error, outcome.error)
    return assistant.handoff_message, f"{reason} {outcome.detail}".strip()


def playground_run(
    *,
    assistant: Assistant,
    start_key: str,
    history: list[dict[str, Any]],
    message: str,
    hooks: list[TeamHooks] | None = None,
    memory_values: Mapping[str, object] | None = None,
    live_scope: str | None = None,
) -> PlaygroundTurn:
    """Answer `message` after `history` (user/assistant chat turns), starting at `start_key`. `memory_values`
    are given with the request: they win over defaults, as a stored value would (nothing is stored here).
    `live_scope`: where the turn's thoughts and events are published while it runs (the page's live panel).

    Charges nothing: there is no reply message for a ledger row to pay for, and the run span says
    `captain.credit_used = false`.
    """
    started = time.monotonic()
    names = playground_agents(assistant)
    if start_key not in names:
        start_key = TRIAGE_KEY
    context = RunContext(
        account_id=assistant.account_id,
        conversation_id=None,
        extra={"assistant_id": assistant.id, "dry_run": True},
    )
    with tracer.start_as_current_span(sc.SPAN_RUN) as span:
        span.set_attribute(sc.CAPTAIN_ACCOUNT_ID, assistant.account_id)
        span.set_attribute(sc.CAPTAIN_ASSISTANT_ID, assistant.id)
        span.set_attribute(sc.CAPTAIN_PLAYGROUND, True)
        trace_id = format(span.get_span_context().trace_id, "032x")
        result: RunResult | None = None
        outcome: Outcome
        try:
            # A shortcut exactly as production takes it: a fixed reply without the model, or a tool's result
            # (run dry: the playground changes nothing) in the prompt.
            shortcut = shortcut_for_message(assistant=assistant, text=message, context=context)
            if shortcut is not None and shortcut.reply_text is not None:
                result = shortcut_reply_result(shortcut, agent_key=start_key)
            else:
                runner = _playground_runner(
                    assistant,
                    context=context,
                    hooks=hooks,
                    live_scope=live_scope,
                    memory_values=memory_values,
                    prompt_block=shortcut.prompt_block if shortcut is not None else None,
                )
                names = {key: agent.name for key, agent in runner.team.agents.items()}
                turn = TurnInput(history=history, batch=[message], current=start_key)
                result = runner.run(turn).result
            outcome = result.outcome
        except EndpointUnavailable as exc:
            outcome = RunError(error="model_unavailable", detail=str(exc))
        except PromptTemplateError as exc:
            # A template stored before the static check existed: show why, as production would hand over.
            outcome = HumanHandoff(reason=str(exc))
        except Exception as exc:  # an admin must see the failure in the page, not a 500
            logger.exception("playground run for assistant %s failed", assistant.id)
            span.record_exception(exc)
            outcome = RunError(error="internal_error", detail=type(exc).__name__)
        span.set_attribute(sc.CAPTAIN_RUN_OUTCOME, outcome.kind)
        span.set_attribute(sc.CAPTAIN_CREDIT_USED, False)
    return _playground_turn(
        assistant, outcome, result, names=names, start_key=start_key, trace_id=trace_id, started=started
    )


def _playground_runner(
    assistant: Assistant,
    *,
    context: RunContext,
    hooks: list[TeamHooks] | None,
    live_scope: str | None,
    memory_values: Mapping[str, object] | None,
    prompt_block: str | None,
) -> TeamRunner:
    """The team exactly as production builds it (`runner_for`), on the request's memory values."""
    return runner_for(
        assistant,
        team_model=team_model_for(assistant),
        context=context,
        # The playground exists to show what the model saw and said: content is always recorded.
        record_content=True,
        hooks=hooks or [],
        live_scope=live_scope,
        facts=turn_facts(
            assistant=assistant,
            conversation=None,
            request_values=memory_values,
            blocks=[prompt_block] if prompt_block else (),
        ),
    )


def _playground_turn(
    assistant: Assistant,
    outcome: Outcome,
    result: RunResult | None,
    *,
    names: dict[str, str],
    start_key: str,
    trace_id: str,
    started: float,
) -> PlaygroundTurn:
    """What the page shows of the turn. The next message starts at the agent that replied; after anything but a
    reply it starts again at `start_key`."""
    text, detail = _customer_text(outcome, assistant)
    agent_key = result.agent_key if result is not None else start_key
    return PlaygroundTurn(
        outcome=outcome.kind,
        text=text,
        agent_key=agent_key if outcome.kind == "reply" else start_key,
        agent_name=names.get(agent_key, agent_key),
        route=list(result.route) if result is not None else [start_key],
        trace_id=trace_id,
        detail=detail,
        input_tokens=result.usage.input_tokens if result is not None else 0,
        output_tokens=result.usage.output_tokens if result is not None else 0,
        duration_ms=int((time.monotonic() - started) * 1000),
        agent_names=names,
        sources=list(result.sources) if result is not None else [],
    )


# ---- a playground turn as a task --------------------------------------------------------------------------------


def playground_turn_request(
    *, assistant: Assistant, start_key: str, history: list[dict[str, Any]], message: str
) -> PlaygroundRun:
    """Store the turn and hand it to a worker once the row is committed; the page follows its progress."""
    playground_turn = task("captain.tasks.playground_turn")
    playground_runs_prune()
    run = PlaygroundRun.objects.create(
        account_id=assistant.account_id,
        assistant=assistant,
        start_key=start_key,
        history=history,
        message=message,
    )
    transaction.on_commit(lambda: playground_turn.delay(run.pk))
    return run


class _Progress(TeamHooks):
    """Writes one line per step to the row, so the page can show where the turn is while it runs."""

    def __init__(self, run_id: int) -> None:
        self.run_id = run_id
        self.lines: list[str] = []

    def _add(self, line: str) -> None:
        self.lines.append(line)
        PlaygroundRun.objects.filter(pk=self.run_id).update(progress=list(self.lines))

    def on_decision(self, decision: Decision) -> None:
        where = (
            f"stays at {decision.node}" if not decision.switched else f"{decision.node} → {decision.target}"
        )
        self._add(f"routing ({decision.mode}, {decision.phase}): {where}")

    def on_answer(self, node: str, result: RunResult) -> None:
        self._add(
            f"{' → '.join(result.route)} answered ({result.outcome.kind}, {result.usage.requests} model calls)"
        )


def playground_turn_run(*, run_id: int) -> str:
    """The worker's side: run a stored playground turn and store its result. A redelivered task (a killed worker)
    runs it again: nothing it does is billed or sent."""
    claimed = (
        PlaygroundRun.objects.filter(pk=run_id)
        .exclude(status=PlaygroundRun.Status.DONE)
        .update(status=PlaygroundRun.Status.RUNNING, progress=[])
    )
    if not claimed:
        return "already_done"
    run = PlaygroundRun.objects.select_related("assistant").get(pk=run_id)
    turn = playground_run(
        assistant=run.assistant,
        start_key=run.start_key,
        history=list(run.history),
        message=run.message,
        hooks=[_Progress(run.pk)],
        live_scope=playground_scope(run.pk),
    )
    PlaygroundRun.objects.filter(pk=run_id).update(
        status=PlaygroundRun.Status.DONE, result=asdict(turn), finished_at=timezone.now()
    )
    live_end(playground_scope(run.pk))  # after the row says done: the page reloads and finds the answer
    return turn.outcome


def playground_runs_prune(*, now: datetime | None = None) -> int:
    """Delete playground rows older than PLAYGROUND_KEEP_SECONDS (finished, or abandoned by their page)."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=PLAYGROUND_KEEP_SECONDS)
    deleted, _ = PlaygroundRun.objects.filter(created_at__lt=cutoff).delete()
    return deleted
