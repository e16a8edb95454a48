"""Answering one customer message: lock the conversation, load the history, build the team, run it, apply the
outcome. Safe to call again for the same message (a redelivered task): it does nothing the second time."""

from __future__ import annotations

import logging
import time
from typing import Any

from django.db import transaction
from django.db.models import F
from opentelemetry import trace
from redis.exceptions import LockError

from helpdesk.models import Conversation, Message

from ..agents import build_team
from ..agents.builder import PromptVariables
from ..conf import captain_setting
from ..models import TRIAGE_KEY, Assistant
from ..runtime import HumanHandoff, Outcome, RunContext, RunError, Runner, RunResult
from ..runtime import semconv as sc
from .credits import credit_available
from .locks import conversation_lock
from .model_client import model_client
from .outcomes import outcome_apply

logger = logging.getLogger(__name__)
tracer = trace.get_tracer("captain")


class ConversationBusy(Exception):
    """Another run holds this conversation; the task retries shortly (its messages are answered together)."""


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
    message = Message.objects.filter(pk=message_id).only("id", "ai_status", "conversation_id").first()
    if message is None or message.ai_status != Message.AIStatus.PENDING:
        return "already_handled"
    lock = conversation_lock(message.conversation_id)
    if not lock.acquire():
        raise ConversationBusy(message.conversation_id)
    try:
        return _run_locked(message_id=message_id, conversation_id=message.conversation_id)
    finally:
        try:
            lock.release()
        except LockError:
            logger.warning("conversation lock %s expired before release", message.conversation_id)


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
        return "skipped"
    assistant = assistant_for_inbox(conversation.inbox_id)
    if assistant is None:
        Message.objects.filter(pk__in=trigger_ids).update(ai_status=Message.AIStatus.SKIPPED)
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
        outcome: Outcome
        if attempts > captain_setting("MAX_ATTEMPTS"):
            outcome = RunError(error="attempts_exhausted", detail=f"{attempts - 1} attempts failed")
        elif not credit_available(account_id=conversation.account_id):
            outcome = HumanHandoff(reason="The account's AI credit limit is reached.")
        else:
            try:
                result = _run_team(conversation, assistant, agent_names)
                outcome = result.outcome
            except (
                Exception
            ) as exc:  # a bug must end in a handoff, never in silence or a customer-facing trace
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
        )
        span.set_attribute(sc.CAPTAIN_RUN_OUTCOME, applied.run.outcome)
        span.set_attribute(sc.CAPTAIN_CREDIT_USED, applied.credit_used)
        if isinstance(outcome, RunError):
            span.set_attribute(sc.CAPTAIN_RUN_ERROR, outcome.error)
        return applied.run.outcome


def _run_team(conversation: Conversation, assistant: Assistant, agent_names: dict[str, str]) -> RunResult:
    team = build_team(assistant, variables=PromptVariables(contact_name=conversation.contact.name))
    agent_names.update({key: agent.name for key, agent in team.items()})
    start_key = conversation.ai_agent_key if conversation.ai_agent_key in team else TRIAGE_KEY
    runner = Runner(
        model_client(),
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
