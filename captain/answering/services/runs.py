"""Answering one customer message: lock the conversation, load the history, build the team, run it, apply the
outcome. Safe to call again for the same message (a redelivered task): it does nothing the second time."""

from __future__ import annotations

import logging
import time
from datetime import datetime
from typing import Any

from django.utils import timezone
from opentelemetry import trace

from captain.actions.services.confirmations import Settled, confirmation_record_result, confirmation_settle
from captain.actions.services.plans import LoadedPlan, plan_load
from captain.actions.services.shortcuts import agent_name, shortcut_for_batch, shortcut_reply_result
from captain.answering.models import ReplyJob
from captain.answering.services.config_cache import cached, config_version_pinned
from captain.answering.services.credits import credit_release, credit_reserve
from captain.answering.services.history import chat_history
from captain.answering.services.jobs import (
    job_claim_attempt,
    job_pending,
    job_pending_message_ids,
    job_pending_span,
    jobs_finish,
)
from captain.answering.services.live import conversation_scope, live_end
from captain.answering.services.locks import account_run_slot, conversation_lock
from captain.answering.services.outcomes import outcome_apply
from captain.answering.services.team import (
    TeamModel,
    runner_for,
    scenario_models,
    team_credits,
    team_model_for,
)
from captain.answering.services.turn_context import turn_facts
from captain.assistants.models import TRIAGE_KEY, Assistant
from captain.assistants.selectors import assistant_serving
from captain.assistants.services.agents.builder import AgentModel
from captain.assistants.services.model_endpoints import EndpointUnavailable, model_client_for
from captain.conf import captain_setting
from captain.memory.services.memory_step import StepResult, ai_writable, remember_step
from captain.prompts import PromptTemplateError
from captain.routing.services.routing import routing_decisions_record
from captain.routing.services.routing_corrections import corrections_from_dispatch
from captain.runtime import HumanHandoff, Outcome, RunContext, RunError, RunEvent, RunResult, Usage
from captain.runtime import semconv as sc
from captain.runtime.team import TeamTurn, TurnInput
from helpdesk.models import Conversation, Message

logger = logging.getLogger(__name__)
tracer = trace.get_tracer("captain")


class ConversationBusy(Exception):
    """Another run holds this conversation; the task retries shortly (its messages are answered together)."""


class AccountBusy(Exception):
    """The account already has `MAX_CONCURRENT_RUNS_PER_ACCOUNT` runs going; the task waits in the queue."""


def assistant_for_inbox(inbox_id: int) -> Assistant | None:
    return Assistant.objects.filter(assistant_inboxes__inbox_id=inbox_id).first()


def run_for_message(*, message_id: int) -> str:
    """Entry point of the `reply_generate` task. Returns what happened, for logs and tests."""
    job = job_pending(message_id=message_id)
    if job is None:
        return "already_handled"
    lock = conversation_lock(job.conversation_id)
    if not lock.acquire():
        raise ConversationBusy(job.conversation_id)
    try:
        # Taken after the conversation lock so a busy conversation never occupies one of the account's slots.
        slot = account_run_slot(job.account_id)
        if not slot.acquire():
            raise AccountBusy(job.account_id)
        try:
            # One reading of the configuration's version for the run: what it caches is this version's.
            with config_version_pinned():
                return _run_locked(message_id=message_id, conversation_id=job.conversation_id)
        finally:
            slot.release()
    finally:
        lock.release()


def debounce_remaining(message_id: int, *, now: datetime | None = None) -> float:
    """Seconds to wait before answering, so a burst of customer messages gets one reply.

    Trailing debounce: wait until the conversation's newest pending customer message is `DEBOUNCE_SECONDS`
    old, but never defer the oldest one more than `DEBOUNCE_MAX_SECONDS`. 0 means run now.
    """
    window = float(captain_setting("DEBOUNCE_SECONDS"))
    if window <= 0:
        return 0.0
    conversation_id = Message.objects.filter(pk=message_id).values_list("conversation_id", flat=True).first()
    if conversation_id is None:
        return 0.0
    span = job_pending_span(conversation_id=conversation_id)
    if span is None:
        return 0.0
    first, last = span
    now = now or timezone.now()
    quiet_left = window - (now - last).total_seconds()
    cap_left = float(captain_setting("DEBOUNCE_MAX_SECONDS")) - (now - first).total_seconds()
    return max(0.0, min(quiet_left, cap_left))


def _run_locked(*, message_id: int, conversation_id: int) -> str:
    # Counted before any model call, so a message that kills its worker every time ends in a human handoff.
    attempts = job_claim_attempt(message_id=message_id)
    if attempts is None:
        return "already_handled"
    conversation = Conversation.objects.select_related("inbox", "contact", "account").get(pk=conversation_id)
    trigger_ids = job_pending_message_ids(conversation_id=conversation.id)
    if conversation.status != Conversation.Status.PENDING:
        jobs_finish(message_ids=trigger_ids, status=ReplyJob.Status.SKIPPED)
        credit_release(message_ids=trigger_ids)  # an earlier, killed attempt may have held credits
        return "skipped"
    return _run_batch_locked(conversation, message_id, trigger_ids, attempts)


def _run_batch_locked(
    conversation: Conversation, message_id: int, trigger_ids: list[int], attempts: int
) -> str:
    assistant = assistant_serving(inbox_id=conversation.inbox_id)
    if assistant is None:
        jobs_finish(message_ids=trigger_ids, status=ReplyJob.Status.SKIPPED)
        credit_release(message_ids=trigger_ids)
        return "skipped"

    with tracer.start_as_current_span(sc.SPAN_RUN) as span:
        span.set_attribute(sc.CAPTAIN_ACCOUNT_ID, conversation.account_id)
        span.set_attribute(sc.CAPTAIN_CONVERSATION_ID, conversation.id)
        span.set_attribute(sc.CAPTAIN_MESSAGE_ID, message_id)
        span.set_attribute(sc.CAPTAIN_ASSISTANT_ID, assistant.id)
        span.set_attribute(sc.CAPTAIN_TASK_ATTEMPT, attempts)
        started = time.monotonic()
        result: RunResult | None = None
        agent_names: dict[str, str] = {}
        outcome: Outcome | None = None
        credits: int | None = None
        overrides: dict[str, AgentModel] = {}
        plan = LoadedPlan(state=None, row=None)
        if attempts > captain_setting("MAX_ATTEMPTS"):
            outcome = RunError(error="attempts_exhausted", detail=f"{attempts - 1} attempts failed")
        else:
            try:
                team_model = team_model_for(assistant)
            except EndpointUnavailable as exc:
                outcome = RunError(error="model_unavailable", detail=str(exc))
            else:
                overrides = scenario_models(assistant, team_model)
                credits = team_credits(team_model, overrides)
                span.set_attribute(sc.CAPTAIN_CREDIT_PRICE, credits)
                # Held before the model is called, released by outcome_apply unless the AI replies.
                if not credit_reserve(
                    account_id=conversation.account_id, message_id=message_id, amount=credits
                ):
                    outcome = HumanHandoff(reason="The account's AI credit limit is reached.")
        if outcome is None:
            try:
                plan = plan_load(conversation)
                result = _run_team(
                    conversation, assistant, agent_names, team_model, trigger_ids, plan, overrides
                )
                outcome = result.outcome
            except PromptTemplateError as exc:
                # Builder text saved before the static check existed: people take over, the reason says why.
                outcome = HumanHandoff(reason=str(exc))
            except Exception as exc:
                # A bug (or the soft time limit) must end in a handoff, never in silence or a customer-facing
                # trace.
                logger.exception("AI run for message %s failed", message_id)
                span.record_exception(exc)
                outcome = RunError(error="internal_error", detail=type(exc).__name__)
        applied = outcome_apply(
            conversation_id=conversation.id,
            assistant=assistant,
            outcome=outcome,
            result=result,
            agent_names=agent_names,
            trigger_message_ids=trigger_ids,
            trace_id=format(span.get_span_context().trace_id, "032x"),
            duration_ms=int((time.monotonic() - started) * 1000),
            credits=credits,
            plan=plan,
        )
        span.set_attribute(sc.CAPTAIN_RUN_OUTCOME, applied.run.outcome)
        span.set_attribute(sc.CAPTAIN_CREDIT_USED, applied.credit_used)
        live_end(conversation_scope(conversation.id))  # a debug log following the run live closes its stream
        if isinstance(outcome, RunError):
            span.set_attribute(sc.CAPTAIN_RUN_ERROR, outcome.error)
        return applied.run.outcome


def _run_team(
    conversation: Conversation,
    assistant: Assistant,
    agent_names: dict[str, str],
    team_model: TeamModel,
    batch_ids: list[int],
    plan: LoadedPlan,
    overrides: dict[str, AgentModel],
) -> RunResult:
    """One turn of the assistant's team (captain.runtime.team) on this run's batch; the routing decisions it
    took are recorded as `captain.router` spans and `RoutingDecision` rows."""
    context = RunContext(
        account_id=conversation.account_id,
        conversation_id=conversation.id,
        extra={"assistant_id": assistant.id},
        plan=plan.state,
    )
    record_content = captain_setting("RECORD_CONTENT")
    # A shortcut (`/track 12345`) first: a fixed reply ends the turn before any model call (not even the
    # remember step) and costs nothing; a tool shortcut's result joins the team's prompt.
    shortcut = shortcut_for_batch(assistant=assistant, message_ids=batch_ids, context=context)
    if shortcut is not None and shortcut.reply_text is not None:
        current = conversation.ai_agent_key or TRIAGE_KEY
        agent_names[current] = agent_name(assistant, current)
        fixed = shortcut_reply_result(shortcut, agent_key=current)
        fixed.events.append(RunEvent("shortcut", current, detail="fixed reply", data=shortcut.record))
        return fixed
    # The customer's answer to a call held for confirmation: settled (and, if yes, run as stored) first.
    settled = confirmation_settle(conversation=conversation, message_ids=batch_ids)
    if settled is not None:
        context.answered = settled.call
    remembered = _remember(conversation, assistant, team_model, batch_ids, record_content=record_content)
    runner = runner_for(
        assistant,
        team_model=team_model,
        context=context,
        contact_name=conversation.contact.name,
        record_content=record_content,
        live_scope=f"conversation:{conversation.id}",
        overrides=overrides,
        facts=turn_facts(
            assistant=assistant,
            conversation=conversation,
            blocks=[shortcut.prompt_block] if shortcut is not None and shortcut.prompt_block else (),
        ),
    )
    agent_names.update({key: agent.name for key, agent in runner.team.agents.items()})
    turn = runner.run(
        TurnInput.from_chat(
            chat_history(
                conversation,
                batch_ids=batch_ids,
                sees_images=team_model.endpoint.sees_images(team_model.model),
            ),
            current=conversation.ai_agent_key or TRIAGE_KEY,
        )
    )
    _routing_record(conversation, assistant, batch_ids, turn, record_content=record_content)
    shortcut_record = shortcut.record if shortcut is not None else None
    return _result_annotated(
        turn.result, settled=settled, shortcut_record=shortcut_record, remembered=remembered
    )


def _routing_record(
    conversation: Conversation,
    assistant: Assistant,
    batch_ids: list[int],
    turn: TeamTurn,
    *,
    record_content: bool,
) -> None:
    """The turn's routing decisions as `RoutingDecision` rows, and the hand-backs as proposed routing examples."""
    trace_id = format(trace.get_current_span().get_span_context().trace_id, "032x")
    routing_decisions_record(
        account_id=conversation.account_id,
        assistant=assistant,
        conversation_id=conversation.id,
        message_id=max(batch_ids) if batch_ids else None,
        trace_id=trace_id if trace_id.strip("0") else "",
        decisions=turn.dispatch.decisions,
        record_content=record_content,
    )
    # A specialist that handed the message back shows where it belonged: proposed as a routing example.
    corrections_from_dispatch(
        conversation=conversation,
        message_id=max(batch_ids) if batch_ids else None,
        decisions=turn.dispatch.decisions,
    )


def _result_annotated(
    result: RunResult,
    *,
    settled: Settled | None,
    shortcut_record: dict[str, Any] | None,
    remembered: StepResult | None,
) -> RunResult:
    """The team's result with what happened before the team ran: the confirmed call's result is kept on its
    confirmation row, the shortcut and the remember step lead the debug log (the remember call's usage counts)."""
    if settled is not None:
        ran = next((e for e in result.events if e.type == "tool_call" and e.data.get("confirmed")), None)
        if ran is not None:
            confirmation_record_result(settled.row, str(ran.data.get("result", "")))
    if shortcut_record is not None:
        result.events.insert(
            0, RunEvent("shortcut", "", detail="tool result in the prompt", data=shortcut_record)
        )
    if remembered is not None:
        result.usage.add(
            Usage(requests=1, input_tokens=remembered.input_tokens, output_tokens=remembered.output_tokens)
        )
        result.events.insert(
            0, RunEvent("memory", "remember", detail="remember step", data=remembered.as_record())
        )
    return result


def _remember(
    conversation: Conversation,
    assistant: Assistant,
    team_model: TeamModel,
    batch_ids: list[int],
    *,
    record_content: bool,
) -> StepResult | None:
    """The remember step on this run's customer messages, when the assistant declares variables the AI may
    write; None when there is nothing to remember."""
    if not cached(("ai_writable", assistant.pk), lambda: ai_writable(assistant)):
        return None
    texts = list(
        Message.objects.filter(pk__in=batch_ids, message_type=Message.Type.INCOMING)
        .order_by("created_at", "id")
        .values_list("content", flat=True)
    )
    previous = (
        Message.objects.filter(
            conversation=conversation,
            message_type=Message.Type.OUTGOING,
            private=False,
            id__lt=min(batch_ids),
        )
        .order_by("-created_at", "-id")
        .values_list("content", flat=True)
        .first()
        if batch_ids
        else None
    )
    return remember_step(
        assistant=assistant,
        conversation=conversation,
        customer_texts=[t for t in texts if t],
        previous_reply=previous or "",
        client=model_client_for(team_model.endpoint),
        model=team_model.model,
        record_content=record_content,
    )
