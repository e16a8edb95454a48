"""Applying a run's outcome: the customer-visible result, the credit and the run record in ONE transaction."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from captain.actions.services.confirmations import confirmation_hold
from captain.actions.services.plans import LoadedPlan, plan_store
from captain.answering.models import ReplyJob, Run, RunArtifact
from captain.answering.services.credits import credit_debit, credit_release
from captain.answering.services.follow_ups import suggestions_queue
from captain.answering.services.handoff_reasons import plain_handoff_reason
from captain.answering.services.jobs import jobs_any_pending, jobs_finish
from captain.assistants.models import (
    DEFAULT_HANDOFF_MESSAGE,
    DEFAULT_RESOLUTION_MESSAGE,
    TRIAGE_KEY,
    Assistant,
    Scenario,
    customer_text,
)
from captain.conf import captain_setting
from captain.routing.models import RoutingNode
from captain.runtime import HumanHandoff, Outcome, Reply, Resolve, RunError, RunResult
from helpdesk.models import Conversation, Message
from helpdesk.services.conversations import conversation_escalate, conversation_set_status
from helpdesk.services.messages import message_create_ai_reply

ERROR_REASONS = {
    "model_error": "The AI model could not be reached or answered with an error.",
    # Completed by `error_reason` with the per-call timeout: a slow model is not an unreachable one, and the
    # number says which setting to raise (CAPTAIN_LLM_TIMEOUT).
    "model_timeout": "The AI model timed out",
    "max_turns": "The AI did not finish within its turn limit.",
    "empty_reply": "The AI produced an empty reply.",
    "malformed_reply": "The AI's reply could not be read (broken JSON); nothing was sent.",
    "loop_detected": "The AI repeated the same tool call or made no progress on its plan.",
    "tool_budget": "The AI used all its tool calls without finishing.",
    "deadline": "The AI ran out of time.",
    "attempts_exhausted": "The AI failed on this message several times.",
    "internal_error": "The AI run failed with an internal error.",
    # Completed by `error_reason` with the detail: a configuration problem the account's admins can fix.
    "model_unavailable": "The assistant's model cannot be used:",
}


@dataclass(frozen=True)
class AppliedOutcome:
    run: Run
    reply_message: Message | None
    credit_used: bool


def error_reason(outcome: RunError) -> str:
    """What the agents read as the escalation reason when a run failed."""
    reason = ERROR_REASONS.get(outcome.error, outcome.error)
    if outcome.error == "model_timeout":
        timeout, retries = captain_setting("LLM_TIMEOUT_SECONDS"), captain_setting("LLM_MAX_RETRIES")
        attempts = f", {retries + 1} attempts" if retries else ""
        reason = f"{reason} after {timeout:g} s{attempts}."
    elif outcome.error == "model_unavailable":
        reason = f"{reason} {outcome.detail}"
    return reason


def handoff_message_for(conversation: Conversation, assistant: Assistant | None) -> str:
    """The inbox's own handoff text wins (it may be channel-specific), then the assistant's (the product's default
    in the inbox's language)."""
    if conversation.inbox.handoff_message or not assistant:
        return conversation.inbox.handoff_message
    return customer_text(assistant.handoff_message, DEFAULT_HANDOFF_MESSAGE, conversation.inbox.language)


@dataclass(frozen=True)
class _Effect:
    """What the outcome did to the conversation, before the bookkeeping that follows every outcome alike (holds
    released, jobs finished, the run recorded). `recorded` is the run's outcome: not always the model's."""

    recorded: str
    detail: str = ""
    reply_message: Message | None = None
    credit_used: bool = False


@transaction.atomic
def outcome_apply(
    *,
    conversation_id: int,
    assistant: Assistant | None,
    outcome: Outcome,
    result: RunResult | None,
    agent_names: dict[str, str],
    trigger_message_ids: list[int],
    trace_id: str,
    duration_ms: int,
    credits: int | None = None,
    plan: LoadedPlan | None = None,
) -> AppliedOutcome:
    """Make the outcome real. Replies are charged here, in the same transaction as the message; handoffs,
    resolutions and failures cost nothing. A person who took over during the run wins: the AI's answer is dropped.

    The helpers below are phases of this one transaction (the exactly-once guarantee: reply, ledger row and Run
    commit together or not at all); none of them may be called outside it."""
    # The inbox is read, not locked: a FOR UPDATE over the join would lock the inbox row and serialise every
    # message of the inbox behind this transaction (inserting a message takes KEY SHARE on its inbox).
    conversation = (
        Conversation.objects.select_for_update(no_key=True, of=("self",))
        .select_related("inbox")
        .get(pk=conversation_id)
    )
    agent_key = result.agent_key if result else ""
    effect = _outcome_effect(
        conversation=conversation,
        assistant=assistant,
        outcome=outcome,
        agent_key=agent_key,
        agent_names=agent_names,
        trigger_message_ids=trigger_message_ids,
        credits=credits,
    )
    # Whatever the run held and did not turn into a charge goes back (handoffs and failures cost nothing); a
    # charge already took the holds of these messages (`credit_debit(held_for=...)`).
    if not effect.credit_used:
        credit_release(message_ids=trigger_message_ids)

    jobs_finish(
        message_ids=trigger_message_ids,
        status=ReplyJob.Status.DONE if effect.recorded != Run.Outcome.SKIPPED else ReplyJob.Status.SKIPPED,
    )
    run = _run_record(
        conversation=conversation,
        assistant=assistant,
        outcome=outcome,
        result=result,
        effect=effect,
        agent_key=agent_key,
        trigger_message_ids=trigger_message_ids,
        trace_id=trace_id,
        duration_ms=duration_ms,
    )
    if result is not None and plan is not None:
        plan_store(conversation=conversation, assistant=assistant, loaded=plan, state=result.plan)
    return AppliedOutcome(run=run, reply_message=effect.reply_message, credit_used=effect.credit_used)


def _outcome_effect(
    *,
    conversation: Conversation,
    assistant: Assistant | None,
    outcome: Outcome,
    agent_key: str,
    agent_names: dict[str, str],
    trigger_message_ids: list[int],
    credits: int | None,
) -> _Effect:
    """The customer-visible part of the outcome (reply, handoff, resolution), or nothing when the run is fenced."""
    # Fence: under the conversation's row lock, a run whose messages were all answered meanwhile (by a run that
    # overlapped it after its conversation lock lapsed) must not answer them again.
    if trigger_message_ids and not jobs_any_pending(message_ids=trigger_message_ids):
        return _Effect(Run.Outcome.SKIPPED, "Another run answered these messages meanwhile.")
    if conversation.status != Conversation.Status.PENDING:
        return _Effect(Run.Outcome.SKIPPED, f"People took over during the run ({conversation.status}).")
    if isinstance(outcome, Reply):
        return _reply_apply(
            conversation=conversation,
            assistant=assistant,
            outcome=outcome,
            agent_key=agent_key,
            agent_name=agent_names.get(agent_key, agent_key),
            trigger_message_ids=trigger_message_ids,
            credits=credits,
        )
    if isinstance(outcome, HumanHandoff):
        # Agents read the reason in plain words; the router's details stay in the run's detail and spans.
        reason = plain_handoff_reason(outcome.reason)
        reply_message = _escalate(
            conversation, assistant, reason, outcome.priority, agent_key, outcome.customer_message
        )
        return _Effect(outcome.kind, outcome.reason, reply_message)
    if isinstance(outcome, Resolve):
        reply_message = None
        if assistant and assistant.resolution_message.strip():
            reply_message = message_create_ai_reply(
                conversation=conversation,
                content=customer_text(
                    assistant.resolution_message, DEFAULT_RESOLUTION_MESSAGE, conversation.inbox.language
                ),
                agent_key=agent_key,
                agent_name=agent_names.get(agent_key, agent_key),
            )
        conversation_set_status(
            conversation=conversation, status=Conversation.Status.RESOLVED, actor="The AI"
        )
        return _Effect(outcome.kind, outcome.reason, reply_message)
    if isinstance(outcome, RunError):
        reason = error_reason(outcome)
        detail = reason if outcome.error == "model_unavailable" else f"{reason} {outcome.detail}".strip()
        return _Effect(outcome.kind, detail, _escalate(conversation, assistant, reason, None, agent_key))
    return _Effect(outcome.kind)


def _reply_apply(
    *,
    conversation: Conversation,
    assistant: Assistant | None,
    outcome: Reply,
    agent_key: str,
    agent_name: str,
    trigger_message_ids: list[int],
    credits: int | None,
) -> _Effect:
    """The reply row and its ledger row; a handoff instead when the credit limit refuses the charge."""
    savepoint = transaction.savepoint()
    reply_message = message_create_ai_reply(
        conversation=conversation, content=outcome.text, agent_key=agent_key, agent_name=agent_name
    )
    # A fixed text no model wrote (nothing in the knowledge, off topic) is free, like a handoff.
    credit_used = outcome.billable and credit_debit(
        message=reply_message,
        assistant=assistant,
        agent_key=agent_key,
        amount=credits,
        held_for=trigger_message_ids,
    )
    if outcome.billable and not credit_used:
        # The limit was reached by a concurrent run since we checked: hand over instead of replying free.
        transaction.savepoint_rollback(savepoint)
        detail = "Credit limit reached."
        handoff_message = _escalate(conversation, assistant, detail, None, agent_key)
        return _Effect(Run.Outcome.HUMAN_HANDOFF, detail, handoff_message, credit_used)
    conversation.ai_agent_key = agent_key
    conversation.save(update_fields=["ai_agent_key"])
    if outcome.confirmation is not None:
        # The call waits for the customer's answer to this very message (services/confirmations.py).
        confirmation_hold(
            conversation=conversation,
            assistant=assistant,
            pending=outcome.confirmation,
            asked_message=reply_message,
        )
    quick_replies = list(outcome.suggestions) or (["Yes", "No"] if outcome.confirmation else [])
    if quick_replies:
        # Offered as the channel's quick replies; delivery reads them after this transaction commits.
        reply_message.quick_replies = quick_replies
        reply_message.save(update_fields=["quick_replies"])
    elif credit_used and assistant is not None and assistant.suggestions_enabled:
        # Follow-up questions come after the reply, from the background lane: the customer never waits for
        # them. A confirmation's Yes/No stays with its question; a fixed text (not billable) gets none.
        suggestions_queue(reply_message_id=reply_message.id)
    return _Effect(outcome.kind, "", reply_message, credit_used)


def _run_record(
    *,
    conversation: Conversation,
    assistant: Assistant | None,
    outcome: Outcome,
    result: RunResult | None,
    effect: _Effect,
    agent_key: str,
    trigger_message_ids: list[int],
    trace_id: str,
    duration_ms: int,
) -> Run:
    """The Run row (and the tool artifacts it kept), written last so it records what was actually done."""
    usage = result.usage if result else None
    run = Run.objects.create(
        account_id=conversation.account_id,
        assistant=assistant,
        conversation=conversation,
        trigger_message_id=max(trigger_message_ids) if trigger_message_ids else None,
        reply_message=effect.reply_message,
        outcome=effect.recorded,
        detail=effect.detail[:4000],
        start_agent_key=result.route[0] if result and result.route else "",
        end_agent_key=agent_key,
        route=result.route if result else [],
        llm_calls=usage.requests if usage else 0,
        input_tokens=usage.input_tokens if usage else 0,
        output_tokens=usage.output_tokens if usage else 0,
        credit_used=effect.credit_used,
        sources=result.sources if result else [],
        reasoning=outcome.reasoning if isinstance(outcome, Reply) else "",
        trace_id=trace_id,
        duration_ms=duration_ms,
    )
    if result is not None and result.artifacts:
        RunArtifact.objects.bulk_create(
            RunArtifact(
                account_id=conversation.account_id,
                run=run,
                ref=a.ref,
                tool_name=a.tool,
                content=a.content,
                size=len(a.content),
            )
            for a in result.artifacts
        )
    return run


def handoff_team_id(assistant: Assistant | None, agent_key: str) -> int | None:
    """The team that picks up an escalation made by `agent_key`: its scenario's team, else its routing node's
    team, else the triage node's team; None when nobody in particular."""
    if assistant is None:
        return None
    if agent_key and agent_key != TRIAGE_KEY:
        team_id = (
            Scenario.objects.filter(assistant=assistant, key=agent_key)
            .values_list("handoff_team_id", flat=True)
            .first()
        )
        if team_id:
            return team_id
    for key in dict.fromkeys([agent_key or TRIAGE_KEY, TRIAGE_KEY]):
        team_id = (
            RoutingNode.objects.filter(assistant=assistant, key=key)
            .values_list("handoff_team_id", flat=True)
            .first()
        )
        if team_id:
            return team_id
    return None


def _escalate(
    conversation: Conversation,
    assistant: Assistant | None,
    reason: str,
    priority: str | None,
    agent_key: str,
    customer_message: str = "",
) -> Message | None:
    conversation.ai_agent_key = ""
    conversation.save(update_fields=["ai_agent_key"])
    return conversation_escalate(
        conversation=conversation,
        reason=reason,
        priority=priority,
        customer_message=customer_message or handoff_message_for(conversation, assistant),
        team_id=handoff_team_id(assistant, agent_key),
    )
