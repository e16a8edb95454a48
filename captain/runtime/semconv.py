"""Span names and attribute names: the one vocabulary shared by the runtime, the Django host and the debug
log.

Where the OpenTelemetry GenAI semantic conventions define a name we use it verbatim, so any GenAI-aware
backend (Jaeger, Grafana Tempo, Langfuse, Phoenix...) understands our spans; everything specific to the
helpdesk lives under `captain.*` (the AI team) or `helpdesk.*` (channels and webhooks).

The strings are written out here rather than imported from `opentelemetry-semantic-conventions`: its GenAI
names live in an `_incubating` module that renames things between releases, and a renamed constant must never
silently change what the dashboard's debug log looks for.

Span names are fixed strings, not the convention's "chat {model}" / "execute_tool {tool}" form, so the host
can select the spans of a run by name; the convention's operation is carried by `gen_ai.operation.name`
instead.
"""

from __future__ import annotations

from typing import Final

TRACER_NAME: Final = "captain.runtime"
"""Instrumentation scope of the runtime's spans."""

# ---- span names --------------------------------------------------------------------------------------------

SPAN_WEBHOOK: Final = "helpdesk.webhook"
"""One inbound channel webhook request (verify, parse, store)."""
SPAN_TASK: Final = "captain.task"
"""One Celery task execution."""
SPAN_RUN: Final = "captain.run"
"""One run of the AI team for one customer message; opened by the host around `Runner.run`."""
SPAN_AGENT: Final = "captain.agent"
"""One activation of one agent (from taking control until it answers, hands off or the run stops)."""
SPAN_LLM: Final = "gen_ai.chat"
"""One model call (Chat Completions)."""
SPAN_TOOL: Final = "captain.tool"
"""One function tool call requested by the model, executed or refused."""
SPAN_HANDOFF: Final = "captain.handoff"
"""One handoff tool call: honoured (from -> to), ignored (not the first in its response) or refused."""
SPAN_ROUTER: Final = "captain.router"
"""One routing decision taken outside the agents' own models (rules, embeddings, a router model)."""
SPAN_KNOWLEDGE: Final = "captain.knowledge"
"""The knowledge step of one answer: retrieval, the gate, the grounding check, citations."""
SPAN_HTTP_TOOL: Final = "captain.http_tool"
"""One HTTP request of a custom tool (captain/actions/services/custom_tool_calls.py), a child of its `captain.tool` span."""

# ---- OpenTelemetry GenAI semantic conventions --------------------------------------------------------------

GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME: Final = "gen_ai.provider.name"
GEN_AI_SYSTEM: Final = "gen_ai.system"
"""Deprecated predecessor of `gen_ai.provider.name`; still read by older backends, so we set both."""
GEN_AI_REQUEST_MODEL: Final = "gen_ai.request.model"
GEN_AI_REQUEST_TEMPERATURE: Final = "gen_ai.request.temperature"
GEN_AI_RESPONSE_MODEL: Final = "gen_ai.response.model"
GEN_AI_RESPONSE_ID: Final = "gen_ai.response.id"
GEN_AI_RESPONSE_FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
GEN_AI_USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: Final = "gen_ai.usage.cache_read.input_tokens"
"""Of the input tokens, those the endpoint served from its prompt cache (the prefix it did not read again)."""
GEN_AI_INPUT_MESSAGES: Final = "gen_ai.input.messages"
"""JSON string of the messages sent to the model (only when content recording is on)."""
GEN_AI_OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
"""JSON string of the model's raw output (only when content recording is on)."""
GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
GEN_AI_TOOL_TYPE: Final = "gen_ai.tool.type"
GEN_AI_AGENT_NAME: Final = "gen_ai.agent.name"
GEN_AI_AGENT_ID: Final = "gen_ai.agent.id"
GEN_AI_CONVERSATION_ID: Final = "gen_ai.conversation.id"
ERROR_TYPE: Final = "error.type"
"""General OpenTelemetry attribute: the class of error that ended the operation."""

OP_CHAT: Final = "chat"
OP_INVOKE_AGENT: Final = "invoke_agent"
OP_EXECUTE_TOOL: Final = "execute_tool"
TOOL_TYPE_FUNCTION: Final = "function"

# ---- captain.* (ours) --------------------------------------------------------------------------------------

CAPTAIN_ACCOUNT_ID: Final = "captain.account.id"
CAPTAIN_CONVERSATION_ID: Final = "captain.conversation.id"
CAPTAIN_MESSAGE_ID: Final = "captain.message.id"
"""The inbound customer message the run answers."""
CAPTAIN_ASSISTANT_ID: Final = "captain.assistant.id"

CAPTAIN_RUN_OUTCOME: Final = "captain.run.outcome"
"""`reply`, `human_handoff`, `resolve` or `error` (the outcome's `kind`)."""
CAPTAIN_RUN_ERROR: Final = "captain.run.error"
"""Error kind when the outcome is an error: model_error, model_timeout, max_turns, empty_reply, loop_detected, deadline..."""
CAPTAIN_RUN_ROUTE: Final = "captain.run.route"
"""Agent keys in the order they took control (string array)."""
CAPTAIN_RUN_AGENT: Final = "captain.run.agent"
"""Agent in charge at the end of the run."""
CAPTAIN_RUN_TURNS: Final = "captain.run.turns"
"""Model calls made by the run."""
CAPTAIN_CREDIT_USED: Final = "captain.credit_used"
"""Credits charged for the run; derived from the same decision as the ledger row."""
CAPTAIN_CREDIT_PRICE: Final = "captain.credit_price"
"""Credits a reply costs on the run's endpoint and model (held before the model is called)."""

CAPTAIN_USAGE_REQUESTS: Final = "captain.usage.requests"
CAPTAIN_USAGE_INPUT_TOKENS: Final = "captain.usage.input_tokens"
"""Total prompt tokens of the run (every agent, every call)."""
CAPTAIN_USAGE_OUTPUT_TOKENS: Final = "captain.usage.output_tokens"
"""Total completion tokens of the run."""

CAPTAIN_AGENT_TURN: Final = "captain.agent.turn"
"""1-based index of a model call within the run."""
CAPTAIN_LLM_ERROR: Final = "captain.llm.error"
"""`ModelError.kind` of a failed model call (timeout, rate_limited, server_error, ...)."""

CAPTAIN_TOOL_ARGUMENTS: Final = "captain.tool.arguments"
"""Raw JSON arguments as the model sent them (only when content recording is on)."""
CAPTAIN_TOOL_RESULT: Final = "captain.tool.result"
"""Text given back to the model (only when content recording is on)."""
CAPTAIN_TOOL_REFUSED: Final = "captain.tool.refused"
"""True when the call was outside the agent's allowlist and nothing ran."""
CAPTAIN_TOOL_ERROR: Final = "captain.tool.error"
"""Why a call did not produce a normal result: invalid arguments or an exception."""
CAPTAIN_TOOL_OUTCOME: Final = "captain.tool.outcome"
"""Kind of outcome a tool ended the run with (e.g. human_handoff)."""

CAPTAIN_HANDOFF_FROM: Final = "captain.handoff.from"
CAPTAIN_HANDOFF_TO: Final = "captain.handoff.to"
CAPTAIN_HANDOFF_REASON: Final = "captain.handoff.reason"
"""The model's stated reason (only when content recording is on)."""
CAPTAIN_HANDOFF_STATUS: Final = "captain.handoff.status"
"""`accepted`, `ignored` (a later handoff in the same response) or `refused` (not in the allowlist)."""

CAPTAIN_ROUTER_STRATEGY: Final = "captain.router.strategy"
CAPTAIN_ROUTER_CANDIDATES: Final = "captain.router.candidates"
CAPTAIN_ROUTER_DECISION: Final = "captain.router.decision"
"""Node in charge after the decision (the node itself when it stays)."""
CAPTAIN_ROUTER_PHASE: Final = "captain.router.phase"
"""after_input, after_reply or redispatch."""
CAPTAIN_ROUTER_NODE: Final = "captain.router.node"
"""Node in charge when the decision was taken."""
CAPTAIN_ROUTER_REASON: Final = "captain.router.reason"
CAPTAIN_ROUTER_PROMPT: Final = "captain.router.prompt"
"""Prompt sent to the router model (only when content recording is on)."""
CAPTAIN_ROUTER_RAW_OUTPUT: Final = "captain.router.raw_output"
"""The router model's raw output (only when content recording is on)."""
CAPTAIN_ROUTER_PARSED: Final = "captain.router.parsed"
"""What the output or the encoder pointed at before validation (may be outside the candidates)."""
CAPTAIN_ROUTER_REFUSED: Final = "captain.router.refused"
CAPTAIN_ROUTER_SCORES: Final = "captain.router.scores"
"""Encoder similarity per node, as JSON (semantic routing)."""
CAPTAIN_ROUTER_LATENCY_MS: Final = "captain.router.latency_ms"

CAPTAIN_KNOWLEDGE_ACTION: Final = "captain.knowledge.action"
"""answered, unknown, unknown_handoff, off_topic, grounding_handoff or off."""
CAPTAIN_KNOWLEDGE_QUERY: Final = "captain.knowledge.query"
"""What was searched (only when content recording is on)."""
CAPTAIN_KNOWLEDGE_SOURCES: Final = "captain.knowledge.sources"
"""JSON list of the sources put before the model: ref, title, score, cited."""
CAPTAIN_KNOWLEDGE_BEST_SCORE: Final = "captain.knowledge.best_score"
CAPTAIN_KNOWLEDGE_VERDICT: Final = "captain.knowledge.verdict"
"""The gate's verdict when nothing was found: smalltalk, in_scope or off_topic."""
CAPTAIN_KNOWLEDGE_UNSUPPORTED: Final = "captain.knowledge.unsupported"
"""JSON list, per failed attempt, of the reply's specifics no source supports (the grounding check)."""
CAPTAIN_KNOWLEDGE_EVIDENCE: Final = "captain.knowledge.evidence"
"""JSON list of the source sentences put first in the prompt, with their scores (only when content is recorded)."""
CAPTAIN_KNOWLEDGE_LATENCY_MS: Final = "captain.knowledge.retrieval_ms"
CAPTAIN_KNOWLEDGE_FAQ_LEFT_OUT: Final = "captain.knowledge.faq_left_out"
"""The customer's specific words the closest FAQ entry leaves out, so it was not sent as written (only when
content is recorded: they are the customer's words)."""

EVENT_TRANSFER_PROMISED: Final = "captain.transfer_promised"
"""Span event on the agent span: the reply announced a transfer but no transfer tool was called."""
EVENT_STRUCTURED_REPLY: Final = "captain.structured_reply"
"""Span event on the agent span: the shape the agent's final text came back in."""
CAPTAIN_REPLY_SHAPE: Final = "captain.reply.shape"
"""json, salvaged, plain or broken (captain.runtime.structured)."""
CAPTAIN_REPLY_WELL_FORMED: Final = "captain.reply.well_formed"
"""True when the reply was a well-formed `{response, reasoning}` object."""
CAPTAIN_TRANSFER_RESULT: Final = "captain.transfer_promised.result"
"""What the re-ask did: `handoff on re-ask`, or `stayed: <why>`."""
CAPTAIN_TRANSFER_TEXT: Final = "captain.transfer_promised.text"
"""The reply that made the promise (only when content recording is on)."""

CAPTAIN_PLAYGROUND: Final = "captain.playground"
"""Set (true) on the run span of a playground run, so telemetry backends can tell it from customer traffic."""

CAPTAIN_TASK_NAME: Final = "captain.task.name"
CAPTAIN_TASK_ATTEMPT: Final = "captain.task.attempt"

# ---- helpdesk.* (channels) ---------------------------------------------------------------------------------

HELPDESK_CHANNEL: Final = "helpdesk.channel"
"""Channel type of a webhook (whatsapp, telegram, slack, twilio, api)."""
HELPDESK_INBOX_ID: Final = "helpdesk.inbox.id"
HELPDESK_WEBHOOK_RESULT: Final = "helpdesk.webhook.result"
"""stored, duplicate, ignored, bad_signature, malformed..."""
HELPDESK_MESSAGE_ID: Final = "helpdesk.message.id"


# ---- custom HTTP tools (captain.http_tool spans); secrets are redacted before they are set ----
CAPTAIN_HTTP_METHOD: Final = "captain.http.method"
CAPTAIN_HTTP_URL: Final = "captain.http.url"
CAPTAIN_HTTP_STATUS_CODE: Final = "captain.http.status_code"
CAPTAIN_HTTP_REQUEST_HEADERS: Final = "captain.http.request_headers"
"""JSON object of the request headers, credentials and the identity header replaced by "[redacted]"."""
CAPTAIN_HTTP_REQUEST_BODY: Final = "captain.http.request_body"
CAPTAIN_HTTP_RESPONSE_BODY: Final = "captain.http.response_body"
"""The start of the response body (content recording on only)."""
CAPTAIN_HTTP_ERROR: Final = "captain.http.error"
CAPTAIN_HTTP_ATTEMPTS: Final = "captain.http.attempts"
