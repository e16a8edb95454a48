"""Stored spans -> a readable tree for the debug log.

Each `SpanRecord` becomes a node typed by its span name (the names in `captain.runtime.semconv`), with the
attributes a person wants to read pulled out: messages sent to the model, its raw output and tool calls, tool
arguments and results, handoff decisions, tokens and latency. Attributes we do not know (a new span kind, a
router's extra fields) still appear as a key/value list, so the log never hides what was recorded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from captain.answering.models import SpanRecord
from captain.answering.services.redaction import REDACTED, scrub
from captain.runtime import semconv as sc
from captain.runtime import tracing as tr

KIND_BY_NAME = {
    sc.SPAN_RUN: "run",
    sc.SPAN_AGENT: "agent",
    sc.SPAN_LLM: "llm",
    sc.SPAN_TOOL: "tool",
    sc.SPAN_HANDOFF: "handoff",
    sc.SPAN_ROUTER: "router",
    sc.SPAN_KNOWLEDGE: "knowledge",
    sc.SPAN_HTTP_TOOL: "http",
}

# Header and query-parameter names whose values are credentials. The custom-tool client redacts before it sets
# the span attributes; the debug log redacts again, so a span written by an older or careless client (or
# imported from elsewhere) cannot show a credential.
_SECRET_NAME = re.compile(r"auth|token|secret|key|password|passwd|cookie|signature|session|credential", re.I)
_HTTP_ATTRIBUTES = {
    sc.CAPTAIN_HTTP_METHOD,
    sc.CAPTAIN_HTTP_URL,
    sc.CAPTAIN_HTTP_STATUS_CODE,
    sc.CAPTAIN_HTTP_REQUEST_HEADERS,
    sc.CAPTAIN_HTTP_REQUEST_BODY,
    sc.CAPTAIN_HTTP_RESPONSE_BODY,
    sc.CAPTAIN_HTTP_ERROR,
    sc.CAPTAIN_HTTP_ATTEMPTS,
}

# Shown in a node's own fields; everything else goes to "other attributes".
_CONSUMED = {
    sc.GEN_AI_INPUT_MESSAGES,
    sc.GEN_AI_OUTPUT_MESSAGES,
    sc.CAPTAIN_TOOL_ARGUMENTS,
    sc.CAPTAIN_TOOL_RESULT,
    sc.GEN_AI_OPERATION_NAME,
    *_HTTP_ATTRIBUTES,
}


@dataclass
class NodeEvent:
    """A span event the log shows in place: a thought, a plan state, an artifact, a confirmation, a protocol
    error (the names in `captain.runtime.tracing`)."""

    kind: str
    """thought, plan, artifact, confirmation or protocol_error."""
    agent: str
    text: str = ""
    """The thought, the confirmation question or the parse error."""
    facts: list[tuple[str, str]] = field(default_factory=list)
    plan: dict[str, Any] | None = None
    """`PlanState.as_record()` when the plan's content was recorded."""
    arguments: str = ""


@dataclass
class HttpExchange:
    """The request a custom tool sent and what came back (a `captain.http_tool` span), credentials redacted."""

    method: str
    url: str
    status: str
    headers: list[tuple[str, str]]
    request_body: str
    response_body: str
    error: str
    attempts: str


@dataclass
class ChatMessage:
    """One message of a model call's input, as the model saw it."""

    role: str
    content: str
    tool_calls: list[tuple[str, str]] = field(default_factory=list)
    """(function name, pretty-printed arguments)."""
    tool_call_id: str = ""


@dataclass
class SpanNode:
    span: SpanRecord
    kind: str
    """run, agent, llm, tool, handoff, router or other."""
    title: str
    latency_ms: int
    error: bool
    facts: list[tuple[str, str]] = field(default_factory=list)
    """The few values shown next to the title (model, tokens, from -> to ...)."""
    input_messages: list[ChatMessage] = field(default_factory=list)
    output_text: str = ""
    """What the model wrote (its message content)."""
    output_tool_calls: list[tuple[str, str]] = field(default_factory=list)
    raw_output: str = ""
    """The model's raw response, pretty-printed JSON."""
    arguments: str = ""
    result: str = ""
    other: list[tuple[str, str]] = field(default_factory=list)
    events: list[NodeEvent] = field(default_factory=list)
    http: HttpExchange | None = None
    children: list[SpanNode] = field(default_factory=list)

    @property
    def system_prompt(self) -> ChatMessage | None:
        first = self.input_messages[0] if self.input_messages else None
        return first if first and first.role in ("system", "developer") else None

    @property
    def conversation_messages(self) -> list[ChatMessage]:
        return self.input_messages[1:] if self.system_prompt else self.input_messages


def _pretty(value: Any) -> str:
    """JSON text or a value, indented for reading; text that is not JSON is returned unchanged."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _loads(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return None


def _tool_calls(message: dict[str, Any]) -> list[tuple[str, str]]:
    calls = []
    for call in message.get("tool_calls") or []:
        function = (call.get("function") or {}) if isinstance(call, dict) else {}
        calls.append((str(function.get("name", "")), _pretty(function.get("arguments", ""))))
    return calls


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return _pretty(content)  # multi-part content: show it as it was sent


def _chat_messages(raw: Any) -> list[ChatMessage]:
    parsed = _loads(raw)
    if not isinstance(parsed, list):
        return []
    out = []
    for item in parsed:
        if not isinstance(item, dict):
            continue
        out.append(
            ChatMessage(
                role=str(item.get("role", "")),
                content=_content_text(item.get("content")),
                tool_calls=_tool_calls(item),
                tool_call_id=str(item.get("tool_call_id") or ""),
            )
        )
    return out


def _output_message(raw: Any) -> dict[str, Any]:
    """The assistant message inside a raw Chat Completions response (or the message itself)."""
    parsed = _loads(raw)
    if isinstance(parsed, dict) and isinstance(parsed.get("choices"), list) and parsed["choices"]:
        message = parsed["choices"][0].get("message") if isinstance(parsed["choices"][0], dict) else None
        return message if isinstance(message, dict) else {}
    return parsed if isinstance(parsed, dict) else {}


def _latency_ms(span: SpanRecord) -> int:
    return max(0, int((span.end_time - span.start_time).total_seconds() * 1000))


def _fmt(value: Any) -> str:
    if isinstance(value, list):
        return " → ".join(str(v) for v in value) if value else "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


Facts = list[tuple[str, Any]]


def _run_facts(node: SpanNode, a: dict[str, Any], span: SpanRecord) -> Facts:
    node.title = "AI run"
    return [
        ("outcome", a.get(sc.CAPTAIN_RUN_OUTCOME)),
        ("route", a.get(sc.CAPTAIN_RUN_ROUTE)),
        ("model calls", a.get(sc.CAPTAIN_RUN_TURNS)),
        ("tokens in/out", _pair(a, sc.CAPTAIN_USAGE_INPUT_TOKENS, sc.CAPTAIN_USAGE_OUTPUT_TOKENS)),
        ("credit used", a.get(sc.CAPTAIN_CREDIT_USED)),
        ("error", a.get(sc.CAPTAIN_RUN_ERROR)),
    ]


def _agent_facts(node: SpanNode, a: dict[str, Any], span: SpanRecord) -> Facts:
    node.title = f"Agent {a.get(sc.GEN_AI_AGENT_NAME) or a.get(sc.GEN_AI_AGENT_ID) or ''}".strip()
    facts: Facts = [("key", a.get(sc.GEN_AI_AGENT_ID)), ("error", a.get(sc.ERROR_TYPE))]
    # A reply that promised a transfer without calling the tool, and what the re-ask did about it.
    facts += [
        ("transfer promised", (e.get("attributes") or {}).get(sc.CAPTAIN_TRANSFER_RESULT))
        for e in span.events or []
        if e.get("name") == sc.EVENT_TRANSFER_PROMISED
    ]
    return facts


def _llm_facts(node: SpanNode, a: dict[str, Any], span: SpanRecord) -> Facts:
    node.title = f"LLM call #{a.get(sc.CAPTAIN_AGENT_TURN, '?')}"
    node.input_messages = _chat_messages(a.get(sc.GEN_AI_INPUT_MESSAGES))
    raw = a.get(sc.GEN_AI_OUTPUT_MESSAGES)
    if raw is not None:
        node.raw_output = _pretty(raw)
        message = _output_message(raw)
        node.output_text = _content_text(message.get("content"))
        node.output_tool_calls = _tool_calls(message)
    return [
        ("agent", a.get(sc.GEN_AI_AGENT_ID)),
        ("model", a.get(sc.GEN_AI_RESPONSE_MODEL) or a.get(sc.GEN_AI_REQUEST_MODEL)),
        ("tokens in/out", _pair(a, sc.GEN_AI_USAGE_INPUT_TOKENS, sc.GEN_AI_USAGE_OUTPUT_TOKENS)),
        # How much of the prompt the model server took from its cache: the rest it read again.
        ("prompt cached", a.get(sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS) or None),
        ("finish", a.get(sc.GEN_AI_RESPONSE_FINISH_REASONS)),
        ("error", a.get(sc.CAPTAIN_LLM_ERROR)),
    ]


def _tool_facts(node: SpanNode, a: dict[str, Any], span: SpanRecord) -> Facts:
    node.title = f"Tool {a.get(sc.GEN_AI_TOOL_NAME, '')}".strip()
    node.arguments = _pretty(a.get(sc.CAPTAIN_TOOL_ARGUMENTS, ""))
    node.result = str(a.get(sc.CAPTAIN_TOOL_RESULT, ""))
    return [
        ("refused", a.get(sc.CAPTAIN_TOOL_REFUSED)),
        ("error", a.get(sc.CAPTAIN_TOOL_ERROR) or a.get(sc.ERROR_TYPE)),
        ("ends the run with", a.get(sc.CAPTAIN_TOOL_OUTCOME)),
    ]


def _handoff_facts(node: SpanNode, a: dict[str, Any], span: SpanRecord) -> Facts:
    node.title = f"Handoff {a.get(sc.CAPTAIN_HANDOFF_FROM, '?')} → {a.get(sc.CAPTAIN_HANDOFF_TO, '?')}"
    return [("decision", a.get(sc.CAPTAIN_HANDOFF_STATUS)), ("reason", a.get(sc.CAPTAIN_HANDOFF_REASON))]


def _router_facts(node: SpanNode, a: dict[str, Any], span: SpanRecord) -> Facts:
    node.title = f"Routing decision ({a.get(sc.CAPTAIN_ROUTER_STRATEGY, 'router')})"
    # A router that calls a model records its prompt and raw output like an LLM call.
    node.input_messages = _chat_messages(a.get(sc.GEN_AI_INPUT_MESSAGES))
    if a.get(sc.GEN_AI_OUTPUT_MESSAGES) is not None:
        node.raw_output = _pretty(a[sc.GEN_AI_OUTPUT_MESSAGES])
    return [
        ("candidates", a.get(sc.CAPTAIN_ROUTER_CANDIDATES)),
        ("decision", a.get(sc.CAPTAIN_ROUTER_DECISION)),
        ("tokens in/out", _pair(a, sc.GEN_AI_USAGE_INPUT_TOKENS, sc.GEN_AI_USAGE_OUTPUT_TOKENS)),
    ]


def _knowledge_facts(node: SpanNode, a: dict[str, Any], span: SpanRecord) -> Facts:
    node.title = f"Knowledge ({a.get(sc.CAPTAIN_KNOWLEDGE_ACTION, '?')})"
    return [
        ("searched for", a.get(sc.CAPTAIN_KNOWLEDGE_QUERY)),
        ("best score", a.get(sc.CAPTAIN_KNOWLEDGE_BEST_SCORE)),
        ("when nothing was found, the gate said", a.get(sc.CAPTAIN_KNOWLEDGE_VERDICT)),
        ("sources (number, ref, score, cited)", _sources_line(a.get(sc.CAPTAIN_KNOWLEDGE_SOURCES))),
        ("not in any source (grounding check)", a.get(sc.CAPTAIN_KNOWLEDGE_UNSUPPORTED)),
        ("closest FAQ answer not sent as written: it leaves out", a.get(sc.CAPTAIN_KNOWLEDGE_FAQ_LEFT_OUT)),
        ("retrieval ms", a.get(sc.CAPTAIN_KNOWLEDGE_LATENCY_MS)),
    ]


def _http_facts(node: SpanNode, a: dict[str, Any], span: SpanRecord) -> Facts:
    node.http = http_exchange(a)
    node.title = f"HTTP {node.http.method} {node.http.url}".strip()
    return [("status", node.http.status), ("attempts", node.http.attempts), ("error", node.http.error)]


# Per kind of span: its title, the facts listed first, and what the node shows beyond them.
_FACTS_BY_KIND: dict[str, Callable[[SpanNode, dict[str, Any], SpanRecord], Facts]] = {
    "run": _run_facts,
    "agent": _agent_facts,
    "llm": _llm_facts,
    "tool": _tool_facts,
    "handoff": _handoff_facts,
    "router": _router_facts,
    "knowledge": _knowledge_facts,
    "http": _http_facts,
}


def span_node(span: SpanRecord) -> SpanNode:
    a: dict[str, Any] = span.attributes or {}
    kind = KIND_BY_NAME.get(span.name, "other")
    node = SpanNode(
        span=span,
        kind=kind,
        title=span.name,
        latency_ms=_latency_ms(span),
        error=span.status == "ERROR" or bool(a.get(sc.ERROR_TYPE)),
    )
    fill = _FACTS_BY_KIND.get(kind)
    facts = fill(node, a, span) if fill else []
    node.events = [e for e in (node_event(raw) for raw in span.events or []) if e is not None]
    node.facts = [(label, _fmt(value)) for label, value in facts if value not in (None, "", [], "[]")]
    shown = {k for k in a if k in _CONSUMED}
    # HTTP attributes are shown (redacted) in the exchange; never raw in the list.
    node.other = [(k, _fmt(v)) for k, v in sorted(a.items()) if k not in shown and k not in _HTTP_ATTRIBUTES]
    return node


def redact_headers(raw: Any) -> list[tuple[str, str]]:
    """(name, value) of a headers attribute (a JSON object), credential values replaced."""
    parsed = _loads(raw) if not isinstance(raw, dict) else raw
    if not isinstance(parsed, dict):
        return []
    return [
        (str(name), REDACTED if _SECRET_NAME.search(str(name)) else str(value))
        for name, value in parsed.items()
    ]


def redact_url(url: str) -> str:
    """The URL without user info and with credential-looking query parameters replaced."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return REDACTED
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, REDACTED if _SECRET_NAME.search(k) else v) for k, v in pairs], safe="[]")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def http_exchange(a: dict[str, Any]) -> HttpExchange:
    return HttpExchange(
        method=str(a.get(sc.CAPTAIN_HTTP_METHOD, "")),
        url=redact_url(str(a.get(sc.CAPTAIN_HTTP_URL, ""))),
        status=str(a.get(sc.CAPTAIN_HTTP_STATUS_CODE, "")),
        headers=redact_headers(a.get(sc.CAPTAIN_HTTP_REQUEST_HEADERS)),
        request_body=_pretty(a.get(sc.CAPTAIN_HTTP_REQUEST_BODY, "")),
        response_body=_pretty(a.get(sc.CAPTAIN_HTTP_RESPONSE_BODY, "")),
        error=str(a.get(sc.CAPTAIN_HTTP_ERROR, "")),
        attempts=str(a.get(sc.CAPTAIN_HTTP_ATTEMPTS, "")),
    )


_EVENT_KINDS = {
    tr.EVENT_THOUGHT: "thought",
    tr.EVENT_PLAN: "plan",
    tr.EVENT_ARTIFACT: "artifact",
    tr.EVENT_CONFIRMATION: "confirmation",
    tr.EVENT_PROTOCOL_ERROR: "protocol_error",
}


def node_event(raw: Any) -> NodeEvent | None:
    """The log's view of one stored span event, or None for events shown elsewhere (or unknown)."""
    if not isinstance(raw, dict) or raw.get("name") not in _EVENT_KINDS:
        return None
    kind = _EVENT_KINDS[raw["name"]]
    a: dict[str, Any] = raw.get("attributes") or {}
    event = NodeEvent(kind=kind, agent=str(a.get(sc.GEN_AI_AGENT_ID, "")))
    facts: list[tuple[str, Any]] = []
    if kind == "thought":
        event.text = str(a.get(tr.CAPTAIN_THOUGHT_TEXT, ""))
        if not event.text:
            facts = [("characters (content recording off)", a.get(tr.CAPTAIN_THOUGHT_CHARS))]
    elif kind == "plan":
        plan = _loads(a.get(tr.CAPTAIN_PLAN_STATE))
        event.plan = plan_view(plan) if isinstance(plan, dict) else None
        facts = [
            ("action", a.get(tr.CAPTAIN_PLAN_ACTION)),
            ("status", a.get(tr.CAPTAIN_PLAN_STATUS)),
            ("steps done", _pair(a, tr.CAPTAIN_PLAN_STEPS_DONE, tr.CAPTAIN_PLAN_STEPS_TOTAL)),
            ("tool calls", a.get(tr.CAPTAIN_PLAN_TOOL_CALLS)),
        ]
    elif kind == "artifact":
        facts = [
            ("ref", a.get(tr.CAPTAIN_ARTIFACT_REF)),
            ("tool", a.get(tr.CAPTAIN_ARTIFACT_TOOL)),
            ("characters", a.get(tr.CAPTAIN_ARTIFACT_SIZE)),
        ]
    elif kind == "confirmation":
        event.text = str(a.get(tr.CAPTAIN_CONFIRMATION_QUESTION, ""))
        event.arguments = _pretty(a.get(tr.CAPTAIN_CONFIRMATION_ARGUMENTS, ""))
        facts = [
            ("tool", a.get(tr.CAPTAIN_CONFIRMATION_TOOL)),
            ("status", a.get(tr.CAPTAIN_CONFIRMATION_STATUS)),
        ]
    elif kind == "protocol_error":
        event.text = str(a.get(tr.CAPTAIN_PROTOCOL_ERROR, ""))
    event.facts = [(label, _fmt(value)) for label, value in facts if value not in (None, "", [], "[]")]
    return event


def plan_view(plan: dict[str, Any]) -> dict[str, Any]:
    """A plan record (`PlanState.as_record()` or a `Plan` row's fields) with well-typed steps for a template."""
    steps = [
        {"text": str(s.get("text", "")), "done": bool(s.get("done"))}
        for s in plan.get("steps") or []
        if isinstance(s, dict)
    ]
    return {
        "goal": str(plan.get("goal") or ""),
        "steps": steps,
        "done_count": sum(1 for s in steps if s["done"]),
        "status": str(plan.get("status") or ""),
        "waiting_for": str(plan.get("waiting_for") or ""),
        "tool_calls": plan.get("tool_calls", ""),
    }


def collect_events(roots: list[SpanNode], kind: str) -> list[NodeEvent]:
    """Events of `kind` anywhere in the tree, in the order the spans started."""
    found: list[NodeEvent] = []

    def walk(nodes: list[SpanNode]) -> None:
        for node in nodes:
            found.extend(e for e in node.events if e.kind == kind)
            walk(node.children)

    walk(roots)
    return found


def scrub_spans(spans: Iterable[SpanRecord], secrets: Iterable[str]) -> list[SpanRecord]:
    """The spans with every known secret value replaced in their attributes and events (in memory only)."""
    known = sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True)  # longest first: no half-leaks
    out = list(spans)
    if not known:
        return out
    for span in out:
        span.attributes = scrub(span.attributes or {}, known)
        span.events = scrub(span.events or [], known)
    return out


def _sources_line(raw: Any) -> str | None:
    try:
        sources = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return str(raw)
    if not sources:
        return None
    return "; ".join(
        f"[{s.get('number')}] {s.get('ref')} {s.get('score')}{' cited' if s.get('cited') else ''}"
        for s in sources
    )


def _pair(a: dict[str, Any], first: str, second: str) -> str | None:
    if first not in a and second not in a:
        return None
    return f"{a.get(first, 0)} / {a.get(second, 0)}"


def span_tree(spans: Iterable[SpanRecord]) -> list[SpanNode]:
    """Nodes linked parent -> children in start order; spans whose parent was not stored become roots."""
    nodes = [span_node(s) for s in sorted(spans, key=lambda s: (s.start_time, s.pk or 0))]
    by_id = {n.span.span_id: n for n in nodes}
    roots = []
    for node in nodes:
        parent = by_id.get(node.span.parent_span_id) if node.span.parent_span_id else None
        if parent is not None and parent is not node:
            parent.children.append(node)
        else:
            roots.append(node)
    return roots


def agents_involved(roots: list[SpanNode]) -> list[tuple[str, str]]:
    """(key, name) of every agent that took control, in order, without repeats."""
    seen: dict[str, str] = {}

    def walk(nodes: list[SpanNode]) -> None:
        for node in nodes:
            if node.kind == "agent":
                a = node.span.attributes or {}
                key = str(a.get(sc.GEN_AI_AGENT_ID, ""))
                seen.setdefault(key, str(a.get(sc.GEN_AI_AGENT_NAME, key)))
            walk(node.children)

    walk(roots)
    return list(seen.items())


def count_kind(roots: list[SpanNode], kind: str) -> int:
    return sum((node.kind == kind) + count_kind(node.children, kind) for node in roots)
