"""Follow-up questions offered after an AI reply as the channel's quick replies.

When an assistant has `suggestions_enabled`, a billable reply gets one more, separate and small model call: with
its own persona (`suggestions_persona`, or a built-in one), the assistant's endpoint and model, the last turns of
the conversation and the reply, it proposes up to three questions the customer might ask next, in the customer's
language. The call is made AFTER the reply is sent, by a background-lane task (captain.answering.services.
follow_ups): the reply never waits for it. The questions go out as a short follow-up message ("You can also ask:")
whose `Message.quick_replies` each channel shows as buttons; a tap comes back as an ordinary customer message
carrying the question's full text.

Guarantees (each has a test in tests/captain/answering/test_suggestions.py and test_suggestions_follow_up.py):
- A reply is never delayed, lost or turned into a failure because of suggestions: any error of the call (timeout,
  HTTP error, unreadable answer) gives no suggestions and no follow-up.
- The call is short: few output tokens, no retry, a timeout of at most `TIMEOUT_SECONDS`.
- What the customer sees is clean: at most `MAX_SUGGESTIONS`, none empty, repeated or longer than
  `MAX_SUGGESTION_CHARS` (they are dropped, not cut), none repeating the customer's own last message.
- Cost: suggestions cost NO credits. Their tokens are added to the reply's Run record, and the debug log shows
  the call as a `gen_ai.chat` span with agent `suggestions` in the run's trace.
"""

from __future__ import annotations

import json
import logging
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from captain.assistants.models import Assistant
from captain.assistants.services.drafting import json_values
from captain.assistants.services.model_endpoints import Endpoint, model_client_for
from captain.conf import captain_setting
from captain.runtime import ModelClient, ModelError, ModelSettings, OpenAIChatModel, Usage
from captain.runtime import semconv as sc
from captain.runtime.knowledge.tokens import has_cjk

logger = logging.getLogger(__name__)
tracer = trace.get_tracer(sc.TRACER_NAME)

MAX_SUGGESTIONS = 3
MAX_SUGGESTION_CHARS = 80
"""Longer ones are dropped: a quick reply is a short question (and fits every channel's button payload)."""
MAX_TOKENS = 200
"""Three short questions as JSON; a Chinese question of 40 characters takes about 40 tokens."""
TEMPERATURE = 0.3
TIMEOUT_SECONDS = 15.0
"""Per call, without retry; never more than the LLM timeout."""
HISTORY_TURNS = 6
"""Turns of the conversation (before the reply) the model reads."""
TURN_CHARS = 800
"""Of each turn and of the reply: a long answer must not crowd out the question."""
PERSONA_CHARS = 1000
AGENT_ID = "suggestions"
"""`gen_ai.agent.id` of the call's span: how the debug log tells it from the team's own calls."""

DEFAULT_PERSONA = (
    "You think like the customer: after reading the assistant's answer, what would they most likely want to know "
    "next? Prefer practical next steps over general questions."
)

SYSTEM_PROMPT = (
    "You suggest follow-up questions in a customer support chat for {company}.\n"
    "{scope}"
    "Persona of the suggestions:\n{persona}\n\n"
    "Given the conversation and the assistant's latest reply, write up to {n} different short questions the "
    "customer is most likely to ask next, written as the customer would type them (first person), that the "
    "assistant can answer. Each at most {chars} characters. Do not repeat a question already answered. "
    "{language}"
    'Reply with only JSON: {{"suggestions": ["...", "..."]}}.'
)

RESPONSE_FORMAT: dict[str, Any] = {
    # An object around the array, as OpenAI's structured outputs want; an endpoint that refuses the format gets
    # the call again without it (OpenAIChatModel), and the plain answer is still read (`parse_suggestions`).
    "type": "json_schema",
    "json_schema": {
        "name": "follow_up_questions",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {
                "suggestions": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_SUGGESTIONS}
            },
            "required": ["suggestions"],
            "additionalProperties": False,
        },
    },
}

_LIST_MARK_RE = re.compile(r"^(?:[-*•·]|\d{1,2}\s*[.)、:：]|\(\d{1,2}\))\s*")
_QUOTES = "\"'“”‘’「」『』`"


# ---- reading the model's answer ------------------------------------------------------------------------------


def _key(text: str) -> str:
    """What makes two questions the same: case, blanks and punctuation aside."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in folded if not ch.isspace() and not unicodedata.category(ch).startswith("P"))


def _candidates(content: str) -> list[Any]:
    values = json_values(content)
    for value in values:
        if isinstance(value, dict) and isinstance(value.get("suggestions"), list):
            return list(value["suggestions"])
    for value in values:
        if isinstance(value, list):
            return value
    if values or content.lstrip().startswith(("[", "{")):
        return []  # JSON of another shape, or broken off: not a list of lines either
    # No JSON at all: a small model may write a numbered or bulleted list; only its marked lines count, so a
    # sentence of prose is never offered to the customer as a button.
    lines = (line.strip() for line in content.splitlines())
    return [_LIST_MARK_RE.sub("", line, count=1) for line in lines if _LIST_MARK_RE.match(line)]


def parse_suggestions(content: str | None, *, exclude: Sequence[str] = ()) -> list[str]:
    """The usable questions in a model's answer: at most `MAX_SUGGESTIONS`, cleaned, without empty, repeated or
    over-long ones, nor any that repeats a text of `exclude`. Never raises."""
    if not content or not content.strip():
        return []
    seen = {_key(text) for text in exclude}
    questions: list[str] = []
    for candidate in _candidates(content):
        if not isinstance(candidate, str):
            continue
        text = " ".join(candidate.split()).strip(_QUOTES).strip()
        key = _key(text)
        if not key or key in seen or len(text) > MAX_SUGGESTION_CHARS:
            continue
        seen.add(key)
        questions.append(text)
        if len(questions) == MAX_SUGGESTIONS:
            break
    return questions


# ---- the call ------------------------------------------------------------------------------------------------


def _messages(
    assistant: Assistant, history: Sequence[dict[str, Any]], reply_text: str
) -> list[dict[str, str]]:
    turns = [
        t for t in history if t.get("role") in ("user", "assistant") and isinstance(t.get("content"), str)
    ]
    turns = turns[-HISTORY_TURNS:]
    last_customer = next((t["content"] for t in reversed(turns) if t["role"] == "user"), "")
    description = assistant.description.strip()[:PERSONA_CHARS]
    if has_cjk(last_customer):
        language = "The customer writes Chinese: write the questions in Simplified Chinese. "
    else:
        language = "Write the questions in the language of the customer's last message. "
    system = SYSTEM_PROMPT.format(
        company=assistant.product_name or assistant.name,
        scope=f"What the assistant is for: {description}\n" if description else "",
        persona=(assistant.suggestions_persona.strip() or DEFAULT_PERSONA)[:PERSONA_CHARS],
        n=MAX_SUGGESTIONS,
        chars=MAX_SUGGESTION_CHARS,
        language=language,
    )
    # Customer text is data in the user message, never part of the instructions.
    lines = [
        f"{'Customer' if t['role'] == 'user' else 'Assistant'}: {t['content'][:TURN_CHARS]}" for t in turns
    ]
    lines.append(f"Assistant (latest reply): {reply_text[:TURN_CHARS]}")
    user = "Conversation:\n" + "\n".join(lines) + "\n\nWhat will the customer ask next?"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def suggest_follow_ups(
    assistant: Assistant,
    *,
    model_client: ModelClient,
    model: str,
    history: Sequence[dict[str, Any]],
    reply_text: str,
    usage: Usage | None = None,
) -> list[str]:
    """Up to three questions the customer might ask after `reply_text`; [] when the assistant does not offer
    suggestions or the call fails in any way. `history`: chat turns before the reply (role user/assistant).
    `usage`, when given, accumulates the call's tokens (the run's usage). One model call, recorded as a
    `gen_ai.chat` span under the current span."""
    if not assistant.suggestions_enabled or not reply_text.strip():
        return []
    messages = _messages(assistant, history, reply_text)
    customer_turns = [str(t.get("content") or "") for t in history if t.get("role") == "user"]
    record_content = bool(captain_setting("RECORD_CONTENT"))
    attributes: dict[str, Any] = {
        sc.GEN_AI_OPERATION_NAME: sc.OP_CHAT,
        sc.GEN_AI_REQUEST_MODEL: model,
        sc.GEN_AI_REQUEST_TEMPERATURE: TEMPERATURE,
        sc.GEN_AI_AGENT_ID: AGENT_ID,
    }
    if usage is not None:
        # Numbered after the run's own calls, so the debug log lists it as the run's next LLM call.
        attributes[sc.CAPTAIN_AGENT_TURN] = usage.requests + 1
    provider = getattr(model_client, "provider_name", None)
    if isinstance(provider, str):
        attributes[sc.GEN_AI_PROVIDER_NAME] = provider
        attributes[sc.GEN_AI_SYSTEM] = provider
    with tracer.start_as_current_span(
        sc.SPAN_LLM, attributes=attributes, record_exception=False, set_status_on_exception=False
    ) as span:
        if record_content:
            span.set_attribute(sc.GEN_AI_INPUT_MESSAGES, json.dumps(messages, ensure_ascii=False))
        try:
            response = model_client.complete(
                model=model,
                messages=messages,
                settings=ModelSettings(
                    temperature=TEMPERATURE, max_tokens=MAX_TOKENS, response_format=RESPONSE_FORMAT
                ),
            )
        except ModelError as exc:
            span.set_status(Status(StatusCode.ERROR, str(exc)))
            span.set_attribute(sc.ERROR_TYPE, exc.kind)
            span.set_attribute(sc.CAPTAIN_LLM_ERROR, exc.kind)
            logger.info("follow-up suggestions skipped: %s", exc.kind)
            return []
        except Exception as exc:
            # A bug here must cost the customer the buttons, never the reply.
            span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
            span.set_attribute(sc.ERROR_TYPE, type(exc).__name__)
            logger.exception("follow-up suggestions failed")
            return []
        call_usage = Usage(
            requests=1, input_tokens=response.usage.input_tokens, output_tokens=response.usage.output_tokens
        )
        if usage is not None:
            usage.add(call_usage)
        span.set_attribute(sc.GEN_AI_RESPONSE_MODEL, response.model)
        span.set_attribute(sc.GEN_AI_USAGE_INPUT_TOKENS, call_usage.input_tokens)
        span.set_attribute(sc.GEN_AI_USAGE_OUTPUT_TOKENS, call_usage.output_tokens)
        if response.finish_reason:
            span.set_attribute(sc.GEN_AI_RESPONSE_FINISH_REASONS, [response.finish_reason])
        if response.response_id:
            span.set_attribute(sc.GEN_AI_RESPONSE_ID, response.response_id)
        if record_content:
            output = (
                response.raw
                if response.raw is not None
                else {"role": "assistant", "content": response.content}
            )
            span.set_attribute(sc.GEN_AI_OUTPUT_MESSAGES, json.dumps(output, ensure_ascii=False, default=str))
    return parse_suggestions(response.content, exclude=customer_turns[-1:])


def suggestions_model_client(endpoint: Endpoint, *, timeout: float) -> ModelClient:
    """The endpoint's model client with this call's shorter timeout and no retry. The SDK client underneath is
    the endpoint's own (its key, and for an account's endpoint the transport that enforces the outbound policy):
    only the per-request options change."""
    client = model_client_for(endpoint)
    if isinstance(client, OpenAIChatModel):
        return OpenAIChatModel(
            client.client.with_options(timeout=timeout, max_retries=0),
            provider_name=client.provider_name,
            gate=client.gate,
        )
    return client
