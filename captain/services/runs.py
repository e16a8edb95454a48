"""Answering one customer message: lock the conversation, load the history, build the team, run it, apply the
outcome. Safe to call again for the same message (a redelivered task): it does nothing the second time."""

from __future__ import annotations

import logging
import time
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import F, Max, Min, Q
from django.utils import timezone
from opentelemetry import trace

from helpdesk.models import Conversation, Message

from ..agents import build_team
from ..agents.builder import PromptVariables
from ..conf import captain_setting
from ..models import TRIAGE_KEY, Assistant
from ..prompts import PromptTemplateError
from ..runtime import HumanHandoff, Outcome, RunContext, RunError, Runner, RunResult
from ..runtime import semconv as sc
from .credits import credit_release, credit_reserve
from .locks import account_run_slot, conversation_lock
from .model_endpoints import (
    Endpoint,
    EndpointUnavailable,
    chat_model_for,
    endpoint_and_model,
    router_model_for,
)
from .outcomes import outcome_apply

logger = logging.getLogger(__name__)
tracer = trace.get_tracer("captain")


class ConversationBusy(Exception):
    """Another run holds this conversation; the task retries shortly (its messages are answered together)."""


class AccountBusy(Exception):
    """The account already has `MAX_CONCURRENT_RUNS_PER_ACCOUNT` runs going; the task waits in the queue."""


# The customer messages this run answers. A message that arrives after the run took its batch has its own
# task and gets its own run afterwards, so it must not appear in this run's history either: otherwise it
# would be answered twice (once merged into this answer, once by its own run).
_run_batch: ContextVar[frozenset[int] | None] = ContextVar("captain_run_batch", default=None)


def _not_in_this_batch() -> Q:
    """Customer messages still waiting for the AI that this run did not take (empty outside a run)."""
    batch = _run_batch.get()
    if batch is None:
        return Q(pk__in=[])
    return Q(message_type=Message.Type.INCOMING, ai_status=Message.AIStatus.PENDING) & ~Q(pk__in=batch)


def assistant_for_inbox(inbox_id: int) -> Assistant | None:
    return Assistant.objects.filter(assistant_inboxes__inbox_id=inbox_id).first()


def chat_history(conversation: Conversation) -> list[dict[str, Any]]:
    """The last public messages as chat turns: customer -> user, AI and people -> assistant."""
    limit = captain_setting("HISTORY_MESSAGES")
    rows = list(
        Message.objects.filter(conversation=conversation, private=False)
        .exclude(message_type=Message.Type.ACTIVITY)
        # Canned system texts (the inbox greeting) are not the AI's words; keeping them would end the history on
        # an assistant turn before the customer's question is answered.
        .exclude(sender_type=Message.SenderType.SYSTEM)
        .exclude(_not_in_this_batch())
        # Provider order is the order we stored them in: one conversation's webhooks commit in arrival order.
        .order_by("-created_at", "-id")
        .values_list("message_type", "content")[:limit]
    )
    rows.reverse()
    history = [
        {"role": "user" if kind == Message.Type.INCOMING else "assistant", "content": content}
        for kind, content in rows
        if content
    ]
    # A window that starts with our own reply confuses small models; start at a customer turn.
    while history and history[0]["role"] != "user":
        history.pop(0)
    return history


def run_for_message(*, message_id: int) -> str:
    """Entry point of the `reply_generate` task. Returns what happened, for logs and tests."""
    message = (
        Message.objects.filter(pk=message_id).only("id", "ai_status", "conversation_id", "account_id").first()
    )
    if message is None or message.ai_status != Message.AIStatus.PENDING:
        return "already_handled"
    lock = conversation_lock(message.conversation_id)
    if not lock.acquire():
        raise ConversationBusy(message.conversation_id)
    try:
        # Taken after the conversation lock so a busy conversation never occupies one of the account's slots.
        slot = account_run_slot(message.account_id)
        if not slot.acquire():
            raise AccountBusy(message.account_id)
        try:
            return _run_locked(message_id=message_id, conversation_id=message.conversation_id)
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
    span = Message.objects.filter(
        conversation_id=conversation_id,
        message_type=Message.Type.INCOMING,
        ai_status=Message.AIStatus.PENDING,
    ).aggregate(first=Min("created_at"), last=Max("created_at"))
    if span["last"] is None:
        return 0.0
    now = now or timezone.now()
    quiet_left = window - (now - span["last"]).total_seconds()
    cap_left = float(captain_setting("DEBOUNCE_MAX_SECONDS")) - (now - span["first"]).total_seconds()
    return max(0.0, min(quiet_left, cap_left))


def _claim_attempt(message_id: int) -> int | None:
    """Count this attempt in the database before any model call, so a message that kills its worker every time
    ends in a human handoff instead of looping forever."""
    with transaction.atomic():
        updated = Message.objects.filter(pk=message_id, ai_status=Message.AIStatus.PENDING).update(
            ai_attempts=F("ai_attempts") + 1
        )
        if not updated:
            return None
        return Message.objects.values_list("ai_attempts", flat=True).get(pk=message_id)


def _run_locked(*, message_id: int, conversation_id: int) -> str:
    attempts = _claim_attempt(message_id)
    if attempts is None:
        return "already_handled"
    conversation = Conversation.objects.select_related("inbox", "contact").get(pk=conversation_id)
    trigger_ids = list(
        Message.objects.filter(
            conversation=conversation, message_type=Message.Type.INCOMING, ai_status=Message.AIStatus.PENDING
        ).values_list("id", flat=True)
    )
    if conversation.status != Conversation.Status.PENDING:
        Message.objects.filter(pk__in=trigger_ids).update(ai_status=Message.AIStatus.SKIPPED)
        credit_release(message_ids=trigger_ids)  # an earlier, killed attempt may have held credits
        return "skipped"
    batch_token = _run_batch.set(frozenset(trigger_ids))
    try:
        return _run_batch_locked(conversation, message_id, trigger_ids, attempts)
    finally:
        _run_batch.reset(batch_token)


def _run_batch_locked(
    conversation: Conversation, message_id: int, trigger_ids: list[int], attempts: int
) -> str:
    assistant = assistant_for_inbox(conversation.inbox_id)
    if assistant is None:
        Message.objects.filter(pk__in=trigger_ids).update(ai_status=Message.AIStatus.SKIPPED)
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
        if attempts > captain_setting("MAX_ATTEMPTS"):
            outcome = RunError(error="attempts_exhausted", detail=f"{attempts - 1} attempts failed")
        else:
            try:
                endpoint, model = endpoint_and_model(
                    account_id=conversation.account_id,
                    endpoint=assistant.model_endpoint,
                    model=assistant.model,
                )
            except EndpointUnavailable as exc:
                outcome = RunError(error="model_unavailable", detail=str(exc))
            else:
                credits = endpoint.credits_for(model)
                span.set_attribute(sc.CAPTAIN_CREDIT_PRICE, credits)
                # Held before the model is called, released by outcome_apply unless the AI replies.
                if not credit_reserve(
                    account_id=conversation.account_id, message_id=message_id, amount=credits
                ):
                    outcome = HumanHandoff(reason="The account's AI credit limit is reached.")
        if outcome is None:
            try:
                result = _run_team(conversation, assistant, agent_names, TeamModel(endpoint, model))
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
        )
        span.set_attribute(sc.CAPTAIN_RUN_OUTCOME, applied.run.outcome)
        span.set_attribute(sc.CAPTAIN_CREDIT_USED, applied.credit_used)
        if isinstance(outcome, RunError):
            span.set_attribute(sc.CAPTAIN_RUN_ERROR, outcome.error)
        return applied.run.outcome


@dataclass(frozen=True)
class TeamModel:
    """The endpoint and model the assistant's agents answer with (checked and priced before the run)."""

    endpoint: Endpoint
    model: str


def _run_team(
    conversation: Conversation, assistant: Assistant, agent_names: dict[str, str], team_model: TeamModel
) -> RunResult:
    from .routing import routing_graph

    graph = routing_graph(assistant)
    if graph is not None:  # graph routing is on for this assistant (docs/routing.md)
        return _run_team_routed(conversation, assistant, agent_names, graph, team_model)
    team = build_team(
        assistant, variables=PromptVariables(contact_name=conversation.contact.name), model=team_model.model
    )
    agent_names.update({key: agent.name for key, agent in team.items()})
    start_key = conversation.ai_agent_key if conversation.ai_agent_key in team else TRIAGE_KEY
    runner = Runner(
        chat_model_for(team_model.endpoint),
        max_turns=max(1, min(assistant.max_turns, captain_setting("MAX_TURNS_CAP"))),
        deadline_seconds=captain_setting("RUN_DEADLINE_SECONDS"),
        record_content=captain_setting("RECORD_CONTENT"),
    )
    context = RunContext(
        account_id=conversation.account_id,
        conversation_id=conversation.id,
        extra={"assistant_id": assistant.id},
    )
    return runner.run(agents=team, start_key=start_key, messages=chat_history(conversation), context=context)


# ---- graph routing (docs/routing.md) -------------------------------------------------------------------------


def _router_for(
    node_router: Any, *, account_id: int, team_model: TeamModel, graph_model: str
) -> tuple[Any, str]:
    """(RouterModel, model name) for a node's router: the endpoint it names (validated when saved), else the
    assistant's own endpoint. An endpoint removed since falls back to the assistant's, never to a URL."""
    if node_router.endpoint:
        try:
            endpoint, model = endpoint_and_model(
                account_id=account_id, endpoint=node_router.endpoint, model=node_router.model or graph_model
            )
            return router_model_for(endpoint), model
        except EndpointUnavailable as exc:
            logger.warning("router endpoint unusable (%s); using the assistant's", exc)
    model = node_router.model or graph_model or team_model.model
    if not team_model.endpoint.offers(model):
        model = team_model.model
    return router_model_for(team_model.endpoint), model


def _run_team_routed(
    conversation: Conversation,
    assistant: Assistant,
    agent_names: dict[str, str],
    graph: Any,
    team_model: TeamModel,
) -> RunResult:
    """Route the customer's message through the graph, then let the node in charge answer with the Runner.

    The router decides after input (rules, then the node's mode), a hand-back to triage is re-dispatched once,
    after-reply jumps let a node hand over without waiting for the customer; every decision is recorded as a
    `captain.router` span and a `RoutingDecision` row. Replies written by several nodes for one message are sent
    as one message (the last node stays in charge).
    """
    from ..retrieval import encoder_available, get_encoder
    from ..runtime import Reply, RunEvent, Usage
    from ..runtime.routing import HUMAN, OursStrategy, Policy, Turn, dispatch_message, record_decision
    from .routing import routing_decisions_record

    team = build_team(
        assistant,
        variables=PromptVariables(contact_name=conversation.contact.name),
        graph=graph,
        model=team_model.model,
    )
    agent_names.update({key: agent.name for key, agent in team.items()})
    history = chat_history(conversation)
    # The customer's trailing messages (one or a burst) are what is routed; the rest is history.
    split = len(history)
    while split > 0 and history[split - 1]["role"] == "user":
        split -= 1
    message = "\n".join(m["content"] for m in history[split:])
    before = [Turn(m["role"], m["content"]) for m in history[:split]]
    current = conversation.ai_agent_key if conversation.ai_agent_key in team else TRIAGE_KEY
    record_content = captain_setting("RECORD_CONTENT")
    runner = Runner(
        chat_model_for(team_model.endpoint),
        max_turns=max(1, min(assistant.max_turns, captain_setting("MAX_TURNS_CAP"))),
        deadline_seconds=captain_setting("RUN_DEADLINE_SECONDS"),
        record_content=record_content,
    )
    context = RunContext(
        account_id=conversation.account_id,
        conversation_id=conversation.id,
        extra={"assistant_id": assistant.id},
    )
    usage = Usage()
    events: list[RunEvent] = []
    texts: list[str] = []
    last: list[RunResult] = []

    def respond(node: str, turns: list[Turn]) -> tuple[str, str] | None:
        if last and not isinstance(last[-1].outcome, Reply):
            return None  # the run already ended (people, resolved, error): nobody answers after that
        # The stored history, plus what other nodes answered to this message before this one (after-reply hops).
        messages = [*history, *({"role": t.role, "content": t.content} for t in turns[len(before) + 1 :])]
        result = runner.run(agents=team, start_key=node, messages=messages, context=context)
        last.append(result)
        usage.add(result.usage)
        events.extend(result.events)
        if isinstance(result.outcome, Reply):
            texts.append(result.outcome.text)
            return result.agent_key, result.outcome.text
        return None

    strategy = OursStrategy(
        encoder=get_encoder() if encoder_available() else None,
        routers=lambda node_router: _router_for(
            node_router,
            account_id=conversation.account_id,
            team_model=team_model,
            graph_model=graph.router.model,
        ),
    )
    dispatched = dispatch_message(
        graph,
        strategy,
        current=current,
        message=message,
        history=before,
        respond=respond,
        policy=Policy(model_calls=captain_setting("ROUTER_MODEL_CALLS_PER_MESSAGE")),
    )
    trace_id = format(trace.get_current_span().get_span_context().trace_id, "032x")
    for decision in dispatched.decisions:
        record_decision(decision, record_content=record_content)
        usage.add(
            Usage(
                requests=decision.llm_calls,
                input_tokens=decision.input_tokens,
                output_tokens=decision.output_tokens,
            )
        )
        events.append(
            RunEvent(
                "route", decision.node, name=decision.mode, detail=decision.reason, data=decision.as_dict()
            )
        )
    trigger = (
        Message.objects.filter(conversation=conversation, message_type=Message.Type.INCOMING)
        .order_by("-created_at", "-id")
        .values_list("id", flat=True)
        .first()
    )
    routing_decisions_record(
        account_id=conversation.account_id,
        assistant=assistant,
        conversation_id=conversation.id,
        message_id=trigger,
        trace_id=trace_id if trace_id.strip("0") else "",
        decisions=dispatched.decisions,
        record_content=record_content,
    )
    route = list(dispatched.route)
    for result in last:
        route += [k for k in result.route[1:] if not route or k != route[-1]]
    if dispatched.node == HUMAN:
        reason = next((d.reason for d in reversed(dispatched.decisions) if d.target == HUMAN), "")
        outcome: Outcome = HumanHandoff(reason=f"The router handed the conversation to people ({reason}).")
        agent_key = dispatched.route[-2] if len(dispatched.route) > 1 else current
    elif last and not isinstance(last[-1].outcome, Reply):
        outcome, agent_key = last[-1].outcome, last[-1].agent_key
    elif texts:
        outcome, agent_key = Reply("\n\n".join(texts)), dispatched.node
    else:
        outcome, agent_key = RunError("empty_reply", "no node answered"), dispatched.node
    return RunResult(outcome=outcome, agent_key=agent_key, usage=usage, route=route, events=events)
