"""Running the remember step (captain.runtime.remember) for one turn and storing what it found.

Values go through the `remember` tool's own path (`memory_write` with writer "ai"), so a value the step finds and a
value an agent stores with the tool get the same declaration and validation checks. The step costs no credit of
its own (the turn's reply is what is charged) and a failure of it never stops the turn: the team answers with the
memory as it was.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from opentelemetry import trace

from captain.assistants.models import Assistant
from captain.memory.models import MemoryVariable
from captain.memory.services.memory import MemoryWriteRefused, memory_state, memory_write
from captain.prompts.context import one_line
from captain.runtime import ModelClient, ModelError, ModelSettings
from captain.runtime import semconv as sc
from captain.runtime.remember import Declared, parse_remembered, remember_messages, response_format
from helpdesk.models import Conversation

logger = logging.getLogger(__name__)
tracer = trace.get_tracer("captain")
STEP_KEY = "remember"


@dataclass(frozen=True)
class StepResult:
    stored: dict[str, object]
    """name -> value written this turn."""
    refused: dict[str, str]
    """name -> why a value the model proposed was not stored (not in the message, invalid)."""
    error: str = ""
    input_tokens: int = 0
    output_tokens: int = 0

    def as_record(self) -> dict[str, object]:
        return {"stored": self.stored, "refused": self.refused, "error": self.error}


def ai_writable(assistant: Assistant) -> bool:
    return MemoryVariable.objects.filter(assistant=assistant, writable_by_ai=True).exists()


def remember_step(
    *,
    assistant: Assistant,
    conversation: Conversation,
    customer_texts: Sequence[str],
    previous_reply: str,
    client: ModelClient,
    model: str,
    record_content: bool,
) -> StepResult:
    """Ask the model which declared values the customer's new message(s) state, and store the ones it wrote."""
    entries = [e for e in memory_state(assistant=assistant, conversation=conversation) if e.writable_by_ai]
    text = "\n".join(customer_texts)
    if not entries or not text.strip():
        return StepResult(stored={}, refused={})
    declared = [
        Declared(e.name, e.description, e.kind, e.choices, one_line(e.value) if e.is_set else "")
        for e in entries
    ]
    messages = remember_messages(declared, customer_texts, previous_reply)
    attributes: dict[str, str | int] = {
        sc.GEN_AI_OPERATION_NAME: sc.OP_CHAT,
        sc.GEN_AI_REQUEST_MODEL: model,
        sc.GEN_AI_AGENT_ID: STEP_KEY,
        sc.CAPTAIN_ACCOUNT_ID: conversation.account_id,
    }
    with tracer.start_as_current_span(sc.SPAN_LLM, attributes=attributes) as span:
        if record_content:
            span.set_attribute(sc.GEN_AI_INPUT_MESSAGES, json.dumps(messages, ensure_ascii=False))
        try:
            response = client.complete(
                model=model,
                messages=messages,
                settings=ModelSettings(
                    temperature=0.0, max_tokens=160, response_format=response_format(declared)
                ),
            )
        except ModelError as exc:
            span.set_attribute(sc.ERROR_TYPE, exc.kind)
            logger.warning("remember step failed: %s", exc.kind)
            return StepResult(stored={}, refused={}, error=exc.kind)
        content = response.content or ""
        if record_content:
            span.set_attribute(
                sc.GEN_AI_OUTPUT_MESSAGES, json.dumps([{"role": "assistant", "content": content}])
            )
        span.set_attribute(sc.GEN_AI_USAGE_INPUT_TOKENS, response.usage.input_tokens)
        span.set_attribute(sc.GEN_AI_USAGE_OUTPUT_TOKENS, response.usage.output_tokens)
        stored: dict[str, object] = {}
        refused: dict[str, str] = {}
        current = {d.name: d.current for d in declared}
        for found in parse_remembered(content, declared, text):
            if not found.grounded:
                refused[found.name] = "not in the customer's message"
                continue
            if current.get(found.name) == found.value:
                continue  # already known: no write, no noise in the record
            try:
                row = memory_write(
                    assistant=assistant,
                    conversation=conversation,
                    name=found.name,
                    value=found.value,
                    writer="ai",
                )
            except MemoryWriteRefused as exc:
                refused[found.name] = str(exc)
                continue
            stored[found.name] = row.value
        span.set_attribute("captain.memory.stored", sorted(stored))
        if refused:
            span.set_attribute("captain.memory.refused", sorted(refused))
    return StepResult(
        stored=stored,
        refused=refused,
        input_tokens=response.usage.input_tokens,
        output_tokens=response.usage.output_tokens,
    )
