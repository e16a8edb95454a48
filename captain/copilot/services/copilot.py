"""The agents' copilot on the conversation page: a draft reply grounded in the assistant's knowledge, a summary of
the conversation, and rewrites of the agent's own text (rephrase, fix the tone, translate into the customer's
language).

An agent's click stores a `CopilotRun` and queues it (`copilot_request`); a worker runs it (`copilot_run_execute`)
with the assistant's own endpoint and model (`team_model_for`, as the AI team and the drafting jobs), streams the
text as it is generated on the live channel `captain:live:copilot:<run_id>` (captain.answering.services.live) and stores
the result, which the page also fetches from the status view once the stream ends. Nothing here sends anything
to a customer: the text goes into the composer, and sending it is the agent's ordinary reply.

The draft searches the same knowledge the AI team answers from (`AssistantKnowledge`, scoped to the assistant
and its account) with the customer's latest message, puts what it found in the prompt, and keeps the sources on
the run so the page shows them under the box.

Each run is one trace (a `captain.copilot` span with the model call under it): the debug log lists the
conversation's copilot runs with their spans. A run that produced text is charged COPILOT_CREDITS (CAPTAIN
setting, default 1) in the transaction that stores the text; a failed run is charged nothing, and a run the
account cannot pay for fails with a sentence for the agent (checked before the model is called, and again under
the balance lock when charging).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from captain.answering.services.credits import credit_copilot_affordable, credit_copilot_debit
from captain.answering.services.live import LivePublisher, live_end
from captain.answering.services.redaction import account_secrets
from captain.answering.services.runs import assistant_for_inbox
from captain.answering.services.team import team_model_for
from captain.assistants.models import Assistant
from captain.assistants.services.model_endpoints import EndpointUnavailable, model_client_for
from captain.conf import captain_setting
from captain.copilot.models import CopilotRun
from captain.knowledge.services.knowledge_search import AssistantKnowledge, has_knowledge
from captain.prompts import render_file
from captain.queue import task
from captain.runtime import Agent, RunContext
from captain.runtime import semconv as sc
from captain.runtime.model import ModelClient, ModelError, ModelResponse, ModelSettings
from helpdesk.models import Conversation, Message

logger = logging.getLogger(__name__)
tracer = trace.get_tracer("captain")

SPAN_COPILOT = "captain.copilot"
"""The root span of one copilot run (the debug log finds it by the run's trace id)."""
ATTR_COPILOT_KIND = "captain.copilot.kind"
ATTR_COPILOT_RUN_ID = "captain.copilot.run_id"
ATTR_COPILOT_SOURCES = "captain.copilot.sources"

TRANSCRIPT_MESSAGES = 30
"""The newest public messages the model reads (a summary of a very long conversation covers its recent part)."""
TRANSCRIPT_MESSAGE_CHARS = 1500
MAX_INPUT_CHARS = 10_000
"""The composer's own limit: a rewrite of more than the agent could send is refused."""
MAX_TOKENS = 700
TEMPERATURE = 0.3
KNOWLEDGE_LIMIT = 4

REWRITES = frozenset({CopilotRun.Kind.REPHRASE, CopilotRun.Kind.FIX_TONE, CopilotRun.Kind.TRANSLATE})

NO_ASSISTANT = "No AI assistant answers this conversation's inbox, so the copilot cannot help here."
NO_CREDITS = "The account has no credits left for the copilot. An administrator can raise the credit limit."
MODEL_FAILED = "The AI model did not answer. Try again in a moment."
MODEL_GONE = "The AI model this assistant uses is not available. An administrator can choose another one."
EMPTY_ANSWER = "The AI model answered with nothing. Try again."


class CopilotRefused(Exception):
    """The request cannot be queued; the message is for the agent."""


def copilot_scope(run_id: int) -> str:
    """The live scope a run's text streams on (`captain:live:copilot:<run_id>`)."""
    return f"copilot:{run_id}"


def copilot_credits() -> int:
    """Credits a copilot run that produced text costs (CAPTAIN["COPILOT_CREDITS"], default 1)."""
    return int(captain_setting("COPILOT_CREDITS"))


# ---- request (the web process) ------------------------------------------------------------------------------


def copilot_request(
    *, conversation: Conversation, user: User | None, kind: str, input_text: str = ""
) -> CopilotRun:
    """Store a copilot run for `conversation` and queue it once the row is committed. Raises CopilotRefused
    (with a sentence for the agent) for an unknown kind, a rewrite without text, or an inbox no assistant
    answers. The caller has already checked that the user may work in the conversation's account."""
    if kind not in CopilotRun.Kind.values:
        raise CopilotRefused("Unknown copilot action.")
    input_text = input_text.strip()
    if kind in REWRITES and not input_text:
        raise CopilotRefused("Type your text in the reply box first; the copilot rewrites what you wrote.")
    if len(input_text) > MAX_INPUT_CHARS:
        raise CopilotRefused(f"The text is longer than {MAX_INPUT_CHARS} characters.")
    assistant = assistant_for_inbox(conversation.inbox_id)
    if assistant is None or assistant.account_id != conversation.account_id:
        raise CopilotRefused(NO_ASSISTANT)
    run = CopilotRun.objects.create(
        account_id=conversation.account_id,
        assistant=assistant,
        conversation=conversation,
        user=user if user is not None and user.is_authenticated else None,
        kind=kind,
        input_text=input_text if kind in REWRITES else "",
    )
    transaction.on_commit(lambda: _enqueue(run.pk))
    return run


def _enqueue(run_id: int) -> None:
    copilot_generate = task("captain.tasks.copilot_generate")
    try:
        copilot_generate.delay(run_id)
    except Exception:  # kombu raises several types for a down broker; the agent must hear of it, not wait
        logger.exception("could not queue copilot run %s", run_id)
        CopilotRun.objects.filter(pk=run_id, status=CopilotRun.Status.QUEUED).update(
            status=CopilotRun.Status.FAILED,
            error="The copilot could not be started (the task queue is unavailable). Try again shortly.",
            finished_at=timezone.now(),
        )


# ---- the prompt -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TranscriptLine:
    who: str
    text: str


def conversation_transcript(conversation: Conversation) -> list[TranscriptLine]:
    """The newest public messages, oldest first, each labelled with who wrote it. Private notes stay out: a
    draft or summary is for the customer's side of the conversation, and a note may hold what must not reach
    them."""
    rows = list(
        Message.objects.filter(
            conversation=conversation,
            account_id=conversation.account_id,
            private=False,
            message_type__in=[Message.Type.INCOMING, Message.Type.OUTGOING],
        )
        .exclude(content="")
        .order_by("-created_at", "-id")[:TRANSCRIPT_MESSAGES]
    )[::-1]
    labels: dict[str, str] = {
        Message.SenderType.CONTACT: "Customer",
        Message.SenderType.USER: "Support agent",
        Message.SenderType.ASSISTANT: "AI assistant",
    }
    return [
        TranscriptLine(labels.get(m.sender_type, "System"), m.content[:TRANSCRIPT_MESSAGE_CHARS])
        for m in rows
    ]


def _knowledge(assistant: Assistant, transcript: list[TranscriptLine]) -> list[dict[str, Any]]:
    """The assistant's knowledge for the customer's latest message (with the one before as context, as the AI
    team searches a short follow-up), numbered as the prompt shows it."""
    customer = [line.text for line in transcript if line.who == "Customer"]
    if not customer or not has_knowledge(assistant):
        return []
    retrieval = AssistantKnowledge(assistant_id=assistant.id, account_id=assistant.account_id).retrieve(
        customer[-1], context=customer[-2] if len(customer) > 1 else "", limit=KNOWLEDGE_LIMIT
    )
    return [
        {**source.as_record(number=i, cited=False), "text": source.text}
        for i, source in enumerate(retrieval.sources, 1)
    ]


def copilot_messages(
    *,
    run: CopilotRun,
    conversation: Conversation,
    transcript: list[TranscriptLine],
    sources: list[dict[str, Any]],
    agent_name: str,
) -> list[dict[str, str]]:
    """The Chat Completions messages of a run: instructions from our own template, and the conversation, the
    knowledge and the agent's text only ever as variables of the input template."""
    system = render_file(
        "copilot_system.jinja", kind=run.kind, agent_name=agent_name, company=conversation.account.name
    )
    user = render_file(
        "copilot_input.jinja",
        kind=run.kind,
        transcript=transcript,
        sources=sources,
        input_text=run.input_text,
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _agent_name(run: CopilotRun) -> str:
    user = run.user
    if user is None:
        return "the agent"
    return str(getattr(user, "first_name", "") or getattr(user, "username", "") or "the agent")


# ---- the run (the worker) ---------------------------------------------------------------------------------------


def _fail(run_id: int, error: str) -> None:
    CopilotRun.objects.filter(pk=run_id).update(
        status=CopilotRun.Status.FAILED, error=error[:500], finished_at=timezone.now()
    )


def _call_model(
    client: ModelClient,
    *,
    model: str,
    messages: list[dict[str, str]],
    publisher: LivePublisher,
    context: RunContext,
) -> ModelResponse:
    """One model call, recorded as a `gen_ai.chat` span; streamed when the client can, each piece published."""
    model_settings = ModelSettings(temperature=TEMPERATURE, max_tokens=MAX_TOKENS)
    record_content = bool(captain_setting("RECORD_CONTENT"))
    attributes: dict[str, Any] = {
        sc.GEN_AI_OPERATION_NAME: sc.OP_CHAT,
        sc.GEN_AI_REQUEST_MODEL: model,
        sc.GEN_AI_REQUEST_TEMPERATURE: TEMPERATURE,
        sc.GEN_AI_AGENT_ID: "copilot",
        sc.CAPTAIN_AGENT_TURN: 1,
    }
    provider = getattr(client, "provider_name", None)
    if isinstance(provider, str):
        attributes[sc.GEN_AI_PROVIDER_NAME] = provider
        attributes[sc.GEN_AI_SYSTEM] = provider
    agent = Agent(key="copilot", name="Copilot", instructions="", model=model)
    with tracer.start_as_current_span(
        sc.SPAN_LLM, attributes=attributes, record_exception=False, set_status_on_exception=False
    ) as span:
        if record_content:
            span.set_attribute(sc.GEN_AI_INPUT_MESSAGES, json.dumps(messages, ensure_ascii=False))
        try:
            stream = getattr(client, "stream", None)
            if callable(stream):

                def on_text(delta: str) -> None:
                    publisher.on_thought(context, agent, delta)

                response: ModelResponse = stream(
                    model=model, messages=messages, settings=model_settings, on_text=on_text
                )
            else:
                response = client.complete(model=model, messages=messages, settings=model_settings)
        except ModelError as exc:
            span.set_status(Status(StatusCode.ERROR, str(exc)))
            span.set_attribute(sc.ERROR_TYPE, exc.kind)
            span.set_attribute(sc.CAPTAIN_LLM_ERROR, exc.kind)
            raise
        span.set_attribute(sc.GEN_AI_RESPONSE_MODEL, response.model)
        span.set_attribute(sc.GEN_AI_USAGE_INPUT_TOKENS, response.usage.input_tokens)
        span.set_attribute(sc.GEN_AI_USAGE_OUTPUT_TOKENS, response.usage.output_tokens)
        if response.finish_reason:
            span.set_attribute(sc.GEN_AI_RESPONSE_FINISH_REASONS, [response.finish_reason])
        if record_content:
            output = {"role": "assistant", "content": response.content}
            span.set_attribute(sc.GEN_AI_OUTPUT_MESSAGES, json.dumps(output, ensure_ascii=False))
    return response


def copilot_run_execute(*, run_id: int) -> str:
    """The worker's side: run a stored copilot run, store its text (charged) or its failure (not charged), then
    tell the page's stream it is over. A redelivered task (a killed worker) runs it again; the charge is once
    per run. Returns the final status."""
    claimed = (
        CopilotRun.objects.filter(pk=run_id)
        .exclude(status__in=[CopilotRun.Status.DONE, CopilotRun.Status.FAILED])
        .update(status=CopilotRun.Status.RUNNING)
    )
    if not claimed:
        return "already_done"
    run = CopilotRun.objects.select_related("assistant", "conversation__account", "user").get(pk=run_id)
    scope = copilot_scope(run.pk)
    try:
        return _execute(run, scope)
    finally:
        live_end(scope)  # after the row says done or failed: the page fetches the stored result


def _execute(run: CopilotRun, scope: str) -> str:
    amount = copilot_credits()
    with tracer.start_as_current_span(SPAN_COPILOT) as span:
        span.set_attribute(sc.CAPTAIN_ACCOUNT_ID, run.account_id)
        span.set_attribute(sc.CAPTAIN_CONVERSATION_ID, run.conversation_id)
        span.set_attribute(ATTR_COPILOT_KIND, run.kind)
        span.set_attribute(ATTR_COPILOT_RUN_ID, run.pk)
        if run.assistant_id:
            span.set_attribute(sc.CAPTAIN_ASSISTANT_ID, run.assistant_id)
        trace_id = format(span.get_span_context().trace_id, "032x")
        CopilotRun.objects.filter(pk=run.pk).update(trace_id=trace_id)

        def fail(error: str, kind: str) -> str:
            span.set_status(Status(StatusCode.ERROR, kind))
            span.set_attribute(sc.ERROR_TYPE, kind)
            span.set_attribute(sc.CAPTAIN_CREDIT_USED, False)
            _fail(run.pk, error)
            return CopilotRun.Status.FAILED

        assistant = run.assistant
        if assistant is None:
            return fail(NO_ASSISTANT, "no_assistant")
        if not credit_copilot_affordable(account_id=run.account_id, amount=amount):
            return fail(NO_CREDITS, "credits_exhausted")
        transcript = conversation_transcript(run.conversation)
        try:
            sources = _knowledge(assistant, transcript) if run.kind == CopilotRun.Kind.DRAFT else []
            if sources:
                span.set_attribute(ATTR_COPILOT_SOURCES, [s["ref"] for s in sources])
            messages = copilot_messages(
                run=run,
                conversation=run.conversation,
                transcript=transcript,
                sources=sources,
                agent_name=_agent_name(run),
            )
            team_model = team_model_for(assistant)
            client = model_client_for(team_model.endpoint)
            context = RunContext(account_id=run.account_id, conversation_id=run.conversation_id)
            publisher = LivePublisher(scope, secrets=account_secrets(run.account_id))
            response = _call_model(
                client, model=team_model.model, messages=messages, publisher=publisher, context=context
            )
        except EndpointUnavailable as exc:
            logger.warning("copilot run %s: endpoint unavailable: %s", run.pk, exc)
            return fail(MODEL_GONE, "model_unavailable")
        except ModelError as exc:
            logger.warning("copilot run %s: model failed: %s", run.pk, exc)
            return fail(MODEL_FAILED, exc.kind)
        except Exception as exc:  # the agent must see a failure, not a spinner that never stops
            logger.exception("copilot run %s failed", run.pk)
            return fail("The copilot failed unexpectedly. Try again.", type(exc).__name__)
        text = (response.content or "").strip()
        CopilotRun.objects.filter(pk=run.pk).update(
            llm_calls=1,
            input_tokens=response.usage.input_tokens,
            output_tokens=response.usage.output_tokens,
        )
        if not text:
            return fail(EMPTY_ANSWER, "empty_answer")
        # The text is stored and charged together, or neither: the balance row's lock decides.
        with transaction.atomic():
            locked = CopilotRun.objects.select_for_update().get(pk=run.pk)
            if not credit_copilot_debit(run=locked, amount=amount):
                charged = False
            else:
                charged = True
                CopilotRun.objects.filter(pk=run.pk).update(
                    status=CopilotRun.Status.DONE,
                    output=text,
                    sources=[{k: v for k, v in s.items() if k != "text"} for s in sources],
                    credit_used=True,
                    error="",
                    finished_at=timezone.now(),
                )
        if not charged:
            return fail(NO_CREDITS, "credits_exhausted")
        span.set_attribute(sc.CAPTAIN_CREDIT_USED, True)
        span.set_attribute(sc.CAPTAIN_CREDIT_PRICE, amount)
    return CopilotRun.Status.DONE


# ---- reading a run (the status view, the debug log) --------------------------------------------------------------


def copilot_run_result(run: CopilotRun) -> dict[str, Any]:
    """What the page needs of a run: its status, and its text, sources or error once it has them."""
    return {
        "id": run.pk,
        "kind": run.kind,
        "status": run.status,
        "finished": run.status in (CopilotRun.Status.DONE, CopilotRun.Status.FAILED),
        "output": run.output if run.status == CopilotRun.Status.DONE else "",
        "sources": [
            {
                "number": s.get("number"),
                "title": s.get("title", ""),
                "url": s.get("url", ""),
                "kind": s.get("kind"),
            }
            for s in (run.sources or [])
            if isinstance(s, dict)
        ],
        "error": run.error if run.status == CopilotRun.Status.FAILED else "",
    }
