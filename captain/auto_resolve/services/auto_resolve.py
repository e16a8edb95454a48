"""Auto-resolve: the assistant's model judges a conversation it was handling that went quiet.

helpdesk's sweep finds the conversations (pending, quiet for the account's `auto_resolve_ai_after_minutes`),
claims each quiet period once and queues `captain.tasks.auto_resolve_judge` through the responder's
`judge_quiet_conversation` hook. Here, under the conversation's run lock (so never alongside a reply run):

- `resolved`: the assistant's resolution message goes to the customer, an activity line gives the model's
  reason, and the conversation is resolved with `resolved_by=ai`;
- `needs_people`: handed to people (`conversation_escalate`) with the reason in plain language;
- a failed judgement (no assistant, model unavailable, model error or timeout, an answer that is not the
  verdict format) is handed to people too, saying why.

The judge sees the conversation's last public messages (customer, AI, people; no notes, no activity lines), each
cut to TRANSCRIPT_MESSAGE_CHARS, and how long it has been quiet. It asks the same endpoint and model the
assistant answers with (`team_model_for`), one call, within the AI's per-call timeout and retry budget.

Cost: nothing. The judgement, the resolution message and the handoff message are free (no credit hold, no
ledger row), like the other housekeeping calls (FAQ drafts, routing example drafts); the span records
`captain.credit_used = false`. Each judgement is a `captain.auto_resolve` span with its model call under it,
and a `Run` row (outcome resolve, human_handoff or error; no trigger message) so it appears in the
conversation's debug log and in the AI resolution rate.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from captain.actions.services.shortcuts import agent_name
from captain.answering.models import Run
from captain.answering.services.jobs import job_pending_message_ids
from captain.answering.services.locks import conversation_lock
from captain.answering.services.outcomes import handoff_message_for, handoff_team_id
from captain.answering.services.runs import assistant_for_inbox
from captain.assistants.models import DEFAULT_RESOLUTION_MESSAGE, TRIAGE_KEY, Assistant, customer_text
from captain.assistants.services.drafting import DraftingModel, json_values
from captain.assistants.services.model_endpoints import EndpointUnavailable
from captain.auto_resolve.prompts import (
    NEEDS_PEOPLE,
    RESOLVED,
    RESPONSE_FORMAT,
    SYSTEM_PROMPT,
    Judgement,
    TranscriptLine,
    parse_verdict,
    user_prompt,
)
from captain.conf import captain_setting
from captain.queue import task
from captain.runtime import ModelError, Usage
from captain.runtime import semconv as sc
from helpdesk.models import Conversation, Message
from helpdesk.services.activities import message_create_activity
from helpdesk.services.auto_resolve import quiet_claim_release
from helpdesk.services.conversations import conversation_escalate, conversation_set_status
from helpdesk.services.messages import message_create_ai_reply

logger = logging.getLogger(__name__)
tracer = trace.get_tracer("captain")

SPAN_AUTO_RESOLVE = "captain.auto_resolve"
ATTR_VERDICT = "captain.auto_resolve.verdict"
"""resolved, needs_people or failed."""
ATTR_OUTCOME = "captain.auto_resolve.outcome"
"""What was done: resolved, handed_over, changed (the conversation moved on meanwhile: nothing done)."""
ATTR_QUIET_MINUTES = "captain.auto_resolve.quiet_minutes"

TRANSCRIPT_MESSAGES = 30
TRANSCRIPT_MESSAGE_CHARS = 1500
MAX_TOKENS = 200
"""A verdict and one sentence; room for a small model's preamble."""

ACTOR = "The AI"


@dataclass(frozen=True)
class Asked:
    """What the model said (or why it could not say)."""

    judgement: Judgement | None
    failure: str = ""
    """For people, when `judgement` is None: why the AI could not judge."""
    usage: Usage | None = None


def judge_quiet_conversation(*, conversation_id: int, quiet_since: datetime) -> str:
    """Entry point of the `auto_resolve_judge` task. Returns what happened, for logs and tests: resolved,
    handed_over, failed (handed over), busy (an AI run or a reply is in progress: asked again at the next
    sweep), changed or off (nothing to do)."""
    lock = conversation_lock(conversation_id)
    if not lock.acquire():
        quiet_claim_release(conversation_id=conversation_id, quiet_since=quiet_since)
        return "busy"
    try:
        return _judge_locked(conversation_id=conversation_id, quiet_since=quiet_since)
    finally:
        lock.release()


def _still_quiet(conversation: Conversation, quiet_since: datetime) -> bool:
    return conversation.status == Conversation.Status.PENDING and conversation.last_activity_at == quiet_since


def _judge_locked(*, conversation_id: int, quiet_since: datetime) -> str:
    conversation = Conversation.objects.select_related("account", "inbox").filter(pk=conversation_id).first()
    if conversation is None or not _still_quiet(conversation, quiet_since):
        return "changed"
    minutes = conversation.account.auto_resolve_ai_after_minutes
    if minutes is None:
        return "off"
    if job_pending_message_ids(conversation_id=conversation_id):
        # A customer message is waiting for its reply run (e.g. a broker outage): that run goes first.
        quiet_claim_release(conversation_id=conversation_id, quiet_since=quiet_since)
        return "busy"
    quiet_minutes = int((timezone.now() - quiet_since).total_seconds() // 60)
    assistant = assistant_for_inbox(conversation.inbox_id)
    with tracer.start_as_current_span(SPAN_AUTO_RESOLVE) as span:
        span.set_attribute(sc.CAPTAIN_ACCOUNT_ID, conversation.account_id)
        span.set_attribute(sc.CAPTAIN_CONVERSATION_ID, conversation.pk)
        span.set_attribute(ATTR_QUIET_MINUTES, quiet_minutes)
        # Derived from the same decision as the ledger: the judgement never writes a ledger row.
        span.set_attribute(sc.CAPTAIN_CREDIT_USED, False)
        started = time.monotonic()
        if assistant is None:
            asked = Asked(None, "no assistant answers this inbox any more")
        else:
            span.set_attribute(sc.CAPTAIN_ASSISTANT_ID, assistant.pk)
            asked = _ask(assistant, conversation, quiet_minutes)
        span.set_attribute(ATTR_VERDICT, asked.judgement.verdict if asked.judgement else "failed")
        outcome = judgement_apply(
            conversation_id=conversation.pk,
            quiet_since=quiet_since,
            assistant=assistant,
            asked=asked,
            quiet_minutes=quiet_minutes,
            trace_id=format(span.get_span_context().trace_id, "032x"),
            duration_ms=int((time.monotonic() - started) * 1000),
        )
        span.set_attribute(ATTR_OUTCOME, outcome)
        if asked.judgement is None:
            span.set_status(Status(StatusCode.ERROR, asked.failure))
    return outcome


def transcript(conversation: Conversation) -> list[TranscriptLine]:
    """The conversation's last public messages, oldest first: what the judge sees."""
    rows = list(
        Message.objects.filter(conversation=conversation, account_id=conversation.account_id, private=False)
        .filter(message_type__in=[Message.Type.INCOMING, Message.Type.OUTGOING])
        .exclude(content="")
        .order_by("-created_at", "-id")
        .values_list("sender_type", "content")[:TRANSCRIPT_MESSAGES]
    )[::-1]
    speakers: dict[str, str] = {
        Message.SenderType.CONTACT: "Customer",
        Message.SenderType.USER: "Support agent",
    }
    return [
        TranscriptLine(
            speakers.get(sender, "AI assistant"), " ".join(content.split())[:TRANSCRIPT_MESSAGE_CHARS]
        )
        for sender, content in rows
    ]


def _ask(assistant: Assistant, conversation: Conversation, quiet_minutes: int) -> Asked:
    """One call to the assistant's model, in a `gen_ai.chat` span; never raises."""
    try:
        model = DraftingModel(
            assistant, max_tokens=MAX_TOKENS, temperature=0.0, response_format=RESPONSE_FORMAT
        )
    except EndpointUnavailable as exc:
        return Asked(None, f"the assistant's model cannot be used: {exc}")
    messages = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": user_prompt(transcript(conversation), quiet_minutes=quiet_minutes)},
    ]
    record_content = bool(captain_setting("RECORD_CONTENT"))
    attributes: dict[str, Any] = {
        sc.GEN_AI_OPERATION_NAME: sc.OP_CHAT,
        sc.GEN_AI_REQUEST_MODEL: model.model,
        sc.GEN_AI_REQUEST_TEMPERATURE: 0.0,
        sc.GEN_AI_AGENT_ID: "auto_resolve",
    }
    with tracer.start_as_current_span(
        sc.SPAN_LLM, attributes=attributes, record_exception=False, set_status_on_exception=False
    ) as span:
        if record_content:
            span.set_attribute(sc.GEN_AI_INPUT_MESSAGES, json.dumps(messages, ensure_ascii=False))
        try:
            response = model.client.complete(model=model.model, messages=messages, settings=model.settings)
        except ModelError as exc:
            span.set_status(Status(StatusCode.ERROR, str(exc)))
            span.set_attribute(sc.ERROR_TYPE, exc.kind)
            span.set_attribute(sc.CAPTAIN_LLM_ERROR, exc.kind)
            logger.warning("auto-resolve: conversation %s: model call failed: %s", conversation.pk, exc)
            if exc.kind == "timeout":
                timeout = float(captain_setting("LLM_TIMEOUT_SECONDS"))
                return Asked(None, f"the AI model timed out after {timeout:g} s")
            return Asked(None, "the AI model could not be reached or answered with an error")
        except Exception as exc:
            # A bug must end in a handoff with a reason, never in a conversation left with the AI for ever.
            span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
            span.set_attribute(sc.ERROR_TYPE, type(exc).__name__)
            logger.exception("auto-resolve: conversation %s: judgement failed", conversation.pk)
            return Asked(None, "the judgement failed with an internal error")
        usage = Usage(
            requests=1, input_tokens=response.usage.input_tokens, output_tokens=response.usage.output_tokens
        )
        span.set_attribute(sc.GEN_AI_RESPONSE_MODEL, response.model)
        span.set_attribute(sc.GEN_AI_USAGE_INPUT_TOKENS, usage.input_tokens)
        span.set_attribute(sc.GEN_AI_USAGE_OUTPUT_TOKENS, usage.output_tokens)
        if response.finish_reason:
            span.set_attribute(sc.GEN_AI_RESPONSE_FINISH_REASONS, [response.finish_reason])
        if record_content:
            output = {"role": "assistant", "content": response.content}
            span.set_attribute(sc.GEN_AI_OUTPUT_MESSAGES, json.dumps(output, ensure_ascii=False))
    judgement = parse_verdict(json_values(response.content))
    if judgement is None:
        return Asked(None, "its answer was not a verdict it could read", usage)
    return Asked(judgement, usage=usage)


@transaction.atomic
def judgement_apply(
    *,
    conversation_id: int,
    quiet_since: datetime,
    assistant: Assistant | None,
    asked: Asked,
    quiet_minutes: int,
    trace_id: str,
    duration_ms: int,
) -> str:
    """Make the verdict real, if the conversation is still the quiet one that was judged (checked under its row
    lock: a customer message or a person taking over during the model call wins, and nothing is done)."""
    conversation = (
        Conversation.objects.select_for_update(no_key=True, of=("self",))
        .select_related("inbox")
        .get(pk=conversation_id)
    )
    if not _still_quiet(conversation, quiet_since) or job_pending_message_ids(
        conversation_id=conversation_id
    ):
        return "changed"
    agent_key = conversation.ai_agent_key or TRIAGE_KEY
    judgement = asked.judgement
    reply: Message | None
    if judgement is not None and judgement.verdict == RESOLVED and assistant is not None:
        reply = _resolve(conversation, assistant, judgement, agent_key=agent_key, quiet_minutes=quiet_minutes)
        outcome, recorded, detail = "resolved", Run.Outcome.RESOLVE, judgement.reason
    else:
        if judgement is not None and judgement.verdict == NEEDS_PEOPLE:
            reason = f"The customer went quiet and the AI judged they still need help: {judgement.reason}"
            outcome, recorded = "handed_over", Run.Outcome.HUMAN_HANDOFF
        else:
            reason = (
                "The customer went quiet and the AI could not judge whether the conversation was resolved "
                f"({asked.failure})."
            )
            outcome, recorded = "failed", Run.Outcome.ERROR
        reply = _hand_over(conversation, assistant, reason, agent_key=agent_key)
        detail = reason
    usage = asked.usage or Usage()
    Run.objects.create(
        account_id=conversation.account_id,
        assistant=assistant,
        conversation=conversation,
        reply_message=reply,
        outcome=recorded,
        detail=f"Auto-resolve after {quiet_minutes} minutes of quiet. {detail}"[:4000],
        start_agent_key=agent_key,
        end_agent_key=agent_key,
        llm_calls=usage.requests,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        credit_used=False,
        trace_id=trace_id if trace_id.strip("0") else "",
        duration_ms=duration_ms,
    )
    return outcome


def _resolve(
    conversation: Conversation,
    assistant: Assistant,
    judgement: Judgement,
    *,
    agent_key: str,
    quiet_minutes: int,
) -> Message | None:
    """The resolved verdict, inside `judgement_apply`'s transaction: the resolution message (if the assistant has
    one), the status, and an activity line with the model's reason."""
    reply: Message | None = None
    if assistant.resolution_message.strip():
        # Not a first response (it answers nothing), and free like every auto-resolve message.
        reply = message_create_ai_reply(
            conversation=conversation,
            content=customer_text(
                assistant.resolution_message, DEFAULT_RESOLUTION_MESSAGE, conversation.inbox.language
            ),
            agent_key=conversation.ai_agent_key,
            agent_name=agent_name(assistant, agent_key),
            answer=False,
        )
    conversation_set_status(
        conversation=conversation,
        status=Conversation.Status.RESOLVED,
        actor=ACTOR,
        resolved_by=Conversation.ResolvedBy.AI,
    )
    message_create_activity(
        conversation=conversation,
        content=f"The AI resolved the conversation after {quiet_minutes} minutes of quiet: {judgement.reason}",
    )
    return reply


def _hand_over(
    conversation: Conversation, assistant: Assistant | None, reason: str, *, agent_key: str
) -> Message | None:
    """Any other verdict (or none), inside `judgement_apply`'s transaction: people take over, told `reason`."""
    # As a reply run's handoff does: a conversation handed back to the AI later starts at triage.
    conversation.ai_agent_key = ""
    conversation.save(update_fields=["ai_agent_key"])
    return conversation_escalate(
        conversation=conversation,
        reason=reason,
        customer_message=handoff_message_for(conversation, assistant),
        team_id=handoff_team_id(assistant, agent_key),
    )


def judgement_enqueue(*, conversation_id: int, quiet_since: datetime) -> bool:
    """Queue the judgement (the responder's hook); False when the broker refused, so the sweep gives the
    claim back and asks again at its next tick."""
    auto_resolve_judge = task("captain.tasks.auto_resolve_judge")
    try:
        auto_resolve_judge.apply_async((conversation_id, quiet_since.isoformat()))
    except Exception:  # kombu raises several types for a down broker; all mean "next sweep"
        logger.exception("auto-resolve: could not queue the judgement of conversation %s", conversation_id)
        return False
    return True
