"""The text tool protocol: tool calls written as tags in the reply, for models without native tool calls.

Many small or self-hosted models cannot return Chat Completions `tool_calls` (Qwen2.5-Coder with its stock
template writes its call as a ```json block in the text; see LOCAL_LLM.md). For them the tools are described in
the system prompt and the model writes, as plain text (seed 003's ReAct shape):

    Thought: what I know and what I do next
    <action name="lookup_order">{"order_id": "A-1042"}</action>

or, when it can answer, `<final_answer>text for the customer</final_answer>`. The runtime answers an action with
"Result of TOOL:" messages. Because the reply is plain text it streams: `TextProtocolParser` reads it chunk by
chunk and hands out the Thought as it grows (for the playground and the debug log, never the customer), however
the chunks split the tags. Arguments stay raw JSON text so the runner validates them against the tool's schema
exactly as it validates native calls; an unknown tool name is kept as a call for the runner to refuse, like a
native one. A reply that breaks the protocol gets a short `error` the runner turns into one re-ask.

No Django here: this module belongs to the framework-free runtime.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from .model import DEFAULT_SETTINGS, ModelClient, ModelResponse, ModelSettings, ToolCall
from .planning import PLANNING_TOOL_NAMES
from .text_tools import recover_text_tool_calls
from .types import HANDOFF_PREFIX

# ---- the prompt ----------------------------------------------------------------------------------------------


def _function(spec: dict[str, Any]) -> dict[str, Any]:
    """The function part of a tool spec, given either `{"type": "function", "function": {...}}` or `{...}`."""
    inner = spec.get("function")
    return inner if isinstance(inner, dict) else spec


def _type_name(schema: dict[str, Any]) -> str:
    if "enum" in schema and isinstance(schema["enum"], list):
        return " | ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(str(k) for k in kind)
    if kind == "array" and isinstance(schema.get("items"), dict):
        return f"list of {_type_name(schema['items'])}"
    return str(kind or "any")


def _compact_parameters(parameters: dict[str, Any]) -> str:
    """`{"order_id": string, required - the order number; "note": string}`: short enough for a 0.5B model."""
    properties = parameters.get("properties") or {}
    if not isinstance(properties, dict) or not properties:
        return "{}"
    required = set(parameters.get("required") or [])
    parts = []
    for name, schema in properties.items():
        schema = schema if isinstance(schema, dict) else {}
        text = f'"{name}": {_type_name(schema)}'
        if name in required:
            text += ", required"
        description = str(schema.get("description") or "").strip()
        if description:
            text += f" - {description}"
        parts.append(text)
    return "{" + "; ".join(parts) + "}"


def _example_value(schema: dict[str, Any]) -> Any:
    for key in ("examples", "enum"):
        values = schema.get(key)
        if isinstance(values, list) and values:
            return values[0]
    if "default" in schema:
        return schema["default"]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    return {"integer": 1, "number": 1, "boolean": True, "array": [], "object": {}}.get(str(kind), "...")


def _example_arguments(parameters: dict[str, Any]) -> str:
    properties = parameters.get("properties") or {}
    if not isinstance(properties, dict):
        return "{}"
    required = [name for name in parameters.get("required") or [] if name in properties]
    chosen = required or list(properties)[:1]
    example = {
        name: _example_value(properties[name] if isinstance(properties[name], dict) else {})
        for name in chosen
    }
    return json.dumps(example, ensure_ascii=False)


def _bookkeeping(name: str) -> bool:
    """Transfers and the planning tools: never the tool of the example."""
    return name.startswith(HANDOFF_PREFIX) or name in PLANNING_TOOL_NAMES


def protocol_prompt(tool_specs: Sequence[dict[str, Any]]) -> str:
    """The block appended to the agent's system prompt: the tools, the reply format, one worked example."""
    functions = [_function(spec) for spec in tool_specs]
    lines = ["## Tools", "You can use these tools. Their arguments are one JSON object."]
    for function in functions:
        description = " ".join(str(function.get("description") or "").split())
        parameters = function.get("parameters") if isinstance(function.get("parameters"), dict) else {}
        lines.append(f"- {function.get('name', '')}: {description}".rstrip())
        lines.append(f"  arguments: {_compact_parameters(parameters or {})}")
    lines += [
        "",
        "## How to reply",
        "Write one line: Thought: what you know and what you do next. Then ONE of:",
        '- to use a tool: <action name="TOOL">{JSON arguments}</action>',
        "  and stop there: the result comes back to you in the next message.",
        "- to answer the customer: <final_answer>your reply to the customer</final_answer>",
    ]
    if functions:
        # The example names one of the agent's own tools: small models copy the example, and a first tool that
        # hands the conversation over (or ends the task) would be copied into a handover nobody wanted.
        first = next((f for f in functions if not _bookkeeping(str(f.get("name", "")))), functions[0])
        parameters = first.get("parameters") if isinstance(first.get("parameters"), dict) else {}
        name = first.get("name", "")
        lines += [
            "",
            "Example:",
            "you: Thought: I must look this up first.",
            f'<action name="{name}">{_example_arguments(parameters or {})}</action>',
            f"next message: Result of {name}: ...",
            "you: Thought: The result answers the question.",
            "<final_answer>...</final_answer>",
        ]
    return "\n".join(lines)


# ---- messages ------------------------------------------------------------------------------------------------

_REMINDER = (
    'Reply as: "Thought: ..." then either <action name="TOOL">{JSON arguments}</action> '
    "or <final_answer>your reply to the customer</final_answer>."
)


# Measured on the bundled 0.5B model (temperature 0, one lookup then answer): after a result in <observation>
# tags, or after a next step that names the <action> option first, it repeated its action every time; this
# wording was the one that made it answer. Tags around the result only confused it.
_NEXT_STEP = (
    "Now write Thought: then <final_answer>your reply to the customer</final_answer>. "
    "(Another <action> only if this result is not enough.)"
)


def reask_message(error: str) -> dict[str, Any]:
    """The user-role message asking once more after a reply that broke the protocol."""
    return {"role": "user", "content": f"Your last reply could not be used: {error}\n{_REMINDER}"}


def assistant_item(raw: str) -> dict[str, Any]:
    """A text-protocol turn in the message history: what the model wrote, up to the end of its last action.
    Whatever a small model wrote after it (a made-up observation, a premature answer) is dropped, so the
    history never shows it results that did not happen."""
    return {"role": "assistant", "content": raw[: _used_end(raw)].strip()}


def observation_item(call: ToolCall, content: str) -> dict[str, Any]:
    """A tool result as a user-role message (no native `tool` role without native calls), followed by what to
    write next: small models otherwise tend to repeat the action they just made."""
    # A result must not be able to pose as the runtime's framing of it.
    safe = re.sub(r"(?im)^(\s*)(result of\b|now write thought)", r"\1> \2", content)
    return {"role": "user", "content": f"Result of {call.name}:\n{safe}\n\n{_NEXT_STEP}"}


# ---- parsing ---------------------------------------------------------------------------------------------------

_HEADER = "thought:"

# Where the Thought ends: a tag, a fence, or a ReAct keyword starting the next part. (literal, word boundary)
_STOPS: tuple[tuple[str, bool], ...] = (
    ("<action", False),
    ("<final_answer", False),
    ("<tool_call", False),
    ("<tool_name", False),
    ("<observation", False),
    ("```", False),
    ("action:", True),
    ("final answer:", True),
    ("observation:", True),
)
_STOP_RE = re.compile(
    "|".join((r"(?<![A-Za-z0-9_])" if boundary else "") + re.escape(lit) for lit, boundary in _STOPS),
    re.IGNORECASE,
)

_ACTION_OPEN = re.compile(r"<action\b([^>]*?)(/?)>", re.IGNORECASE)
_ACTION_CLOSE = re.compile(r"</action\s*>", re.IGNORECASE)
_NAME_ATTR = re.compile(r"""name\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'/>]+))""", re.IGNORECASE)
_FINAL_OPEN = re.compile(r"<final_answer\s*>", re.IGNORECASE)
_FINAL_CLOSE = re.compile(r"</final_answer\s*>", re.IGNORECASE)
_SEED_CALL = re.compile(
    r"<tool_name>\s*(.*?)\s*</tool_name>\s*<arguments>\s*(.*?)\s*</arguments>", re.IGNORECASE | re.DOTALL
)
_FENCE = re.compile(r"^```[A-Za-z_]*\s*(.*?)\s*```$", re.DOTALL)


@dataclass(frozen=True)
class TextTurn:
    """One model reply read as the text protocol."""

    raw: str
    """Everything the model wrote (for the debug log)."""
    thought: str
    """The Thought, exactly the concatenation of what `TextProtocolParser.feed` streamed (plus any tail held
    back until the end)."""
    calls: list[ToolCall] = field(default_factory=list)
    """Actions in order, ids `text_call_1`, ...; arguments raw JSON text (the runner validates them)."""
    final: str | None = None
    """The answer for the customer, when the reply is one."""
    error: str | None = None
    """Why the reply breaks the protocol (for the re-ask); None when it is usable."""


def _thought_start(buffer: str) -> int | None:
    """Index where the Thought text begins: after a leading `Thought:` header, or at 0 without one; None while
    the buffer could still turn out to start with the header."""
    stripped = buffer.lstrip()
    offset = len(buffer) - len(stripped)
    head = stripped[: len(_HEADER)].lower()
    if head == _HEADER:
        return offset + len(_HEADER)
    if _HEADER.startswith(head):
        return None  # "", "T", "Thou"...: wait for more
    return 0


def _held_back(text: str) -> int:
    """How many trailing characters of `text` might begin a stop marker (or are whitespace before one)."""
    keep = 0
    lowered = text.lower()
    for literal, boundary in _STOPS:
        for k in range(min(len(literal), len(text)), 0, -1):
            if k <= keep:
                break
            if lowered.endswith(literal[:k]):
                before = text[-k - 1] if len(text) > k else ""
                if boundary and (before.isalnum() or before == "_"):
                    continue
                keep = k
                break
    # Whitespace right before a (possible) marker is not part of the Thought either.
    rest = text[: len(text) - keep]
    return keep + (len(rest) - len(rest.rstrip()))


def _thought_region(buffer: str, *, final: bool) -> tuple[str, bool]:
    """(Thought text that is certain now, whether a stop marker closed it)."""
    start = _thought_start(buffer)
    if start is None:
        if not final:
            return "", False
        start = 0
    body = buffer[start:]
    stop = _STOP_RE.search(body)
    if stop is not None:
        return body[: stop.start()].strip(), True
    if final:
        return body.strip(), False
    body = body.lstrip()
    return body[: len(body) - _held_back(body)], False


def _used_end(raw: str) -> int:
    """End of the part of a reply the runtime acts on: after its last action (when it has actions before any
    final answer), else the whole reply."""
    final = _FINAL_OPEN.search(raw)
    limit = final.start() if final is not None else len(raw)
    end = None
    for match in _ACTION_CLOSE.finditer(raw, 0, limit):
        end = match.end()
    for match in _ACTION_OPEN.finditer(raw, 0, limit):
        if match.group(2) == "/" and (end is None or match.end() > end):
            end = match.end()
    return end if end is not None else len(raw)


def _arguments(body: str, name: str) -> tuple[str, str | None]:
    """(raw JSON text of the arguments, error)."""
    text = body.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if not text:
        return "{}", None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text, f'the arguments of <action name="{name}"> are not valid JSON'
    if not isinstance(value, dict):
        return text, f'the arguments of <action name="{name}"> must be one JSON object'
    return text, None


def _parse_actions(raw: str, limit: int) -> tuple[list[ToolCall], str | None]:
    calls: list[ToolCall] = []
    position = 0
    while True:
        opening = _ACTION_OPEN.search(raw, position, limit)
        if opening is None:
            break
        attribute = _NAME_ATTR.search(opening.group(1))
        name = next((g for g in attribute.groups() if g is not None), "").strip() if attribute else ""
        if not name:
            return calls, 'an <action> tag needs the tool name: <action name="TOOL">'
        if opening.group(2) == "/":
            arguments, error = "{}", None
            position = opening.end()
        else:
            closing = _ACTION_CLOSE.search(raw, opening.end())
            if closing is None:
                return calls, f'<action name="{name}"> is not closed with </action>'
            following = _ACTION_OPEN.search(raw, opening.end(), closing.start())
            if following is not None:
                return calls, f'<action name="{name}"> is not closed with </action>'
            arguments, error = _arguments(raw[opening.end() : closing.start()], name)
            position = closing.end()
        if error:
            return calls, error
        calls.append(ToolCall(id=f"text_call_{len(calls) + 1}", name=name, arguments=arguments))
    return calls, None


def _mentions_tools(text: str, offered: Collection[str]) -> bool:
    return any(name and name in text for name in offered)


def _parse(raw: str, thought: str, offered: Collection[str]) -> TextTurn:
    final_open = _FINAL_OPEN.search(raw)
    first_action = _ACTION_OPEN.search(raw)
    acting = first_action is not None and (final_open is None or first_action.start() < final_open.start())
    if acting:
        # Actions come first: a final answer written after them is premature (it cannot know the results).
        limit = final_open.start() if final_open is not None else len(raw)
        calls, error = _parse_actions(raw, limit)
        if error:
            return TextTurn(raw, thought, [], None, error)
        return TextTurn(raw, thought, calls, None, None)
    if final_open is not None:
        closing = _FINAL_CLOSE.search(raw, final_open.end())
        # An unclosed final answer at the end of a reply is taken as it is: small models forget closing tags.
        answer = raw[final_open.end() : closing.start() if closing else len(raw)].strip()
        if not answer:
            return TextTurn(raw, thought, [], None, "the <final_answer> is empty")
        return TextTurn(raw, thought, [], answer, None)
    if re.search(r"<action", raw, re.IGNORECASE):
        return TextTurn(raw, thought, [], None, 'an <action> tag is malformed: write <action name="TOOL">')
    # The shapes small models write on their own: seed 003's tags, a ```json block, <tool_call> tags.
    seed_calls: list[ToolCall] = []
    for name, arguments in _SEED_CALL.findall(raw):
        text, error = _arguments(arguments, name)
        if error:
            return TextTurn(raw, thought, [], None, error)
        seed_calls.append(ToolCall(id=f"text_call_{len(seed_calls) + 1}", name=name.strip(), arguments=text))
    if seed_calls:
        return TextTurn(raw, thought, seed_calls, None, None)
    recovered = recover_text_tool_calls(raw, offered)
    if recovered:
        return TextTurn(raw, thought, recovered, None, None)
    if _STOP_RE.search(raw) is None and thought and not _mentions_tools(thought, offered):
        # Plain prose and nothing else: the model answered without the tags. Prose that names a tool is the
        # model talking about its work (or a call it could not format), never something for the customer.
        return TextTurn(raw, thought, [], thought, None)
    if not raw.strip():
        return TextTurn(raw, thought, [], None, "the reply is empty")
    return TextTurn(raw, thought, [], None, "the reply has neither an <action> nor a <final_answer>")


class TextProtocolParser:
    """Reads one streamed reply: `feed` chunks as they come (returns the new Thought text), then `finish`."""

    def __init__(self, offered: Collection[str]) -> None:
        self.offered = frozenset(offered)
        self._text = ""
        self._emitted = ""
        self._closed = False

    @property
    def text(self) -> str:
        """Everything fed so far."""
        return self._text

    def feed(self, chunk: str) -> list[str]:
        """Add a chunk; return the Thought text that became certain with it (empty deltas are not returned)."""
        if not chunk:
            return []
        self._text += chunk
        if self._closed:
            return []
        thought, closed = _thought_region(self._text, final=False)
        self._closed = closed
        return self._advance(thought)

    def _advance(self, thought: str) -> list[str]:
        if not thought.startswith(self._emitted) or len(thought) <= len(self._emitted):
            return []
        delta = thought[len(self._emitted) :]
        self._emitted = thought
        return [delta]

    @property
    def done(self) -> bool:
        """Whether the reply is complete as far as the runtime cares: its final answer is closed, or its last
        action is closed and what follows is not another action (a made-up observation, a premature answer).
        The caller may stop the model there."""
        text = self._text
        if "</" not in text and "/>" not in text:
            return False
        first_action = _ACTION_OPEN.search(text)
        final_open = _FINAL_OPEN.search(text)
        if final_open is not None and (first_action is None or final_open.start() < first_action.start()):
            return _FINAL_CLOSE.search(text, final_open.end()) is not None
        if first_action is None:
            return False
        end = _used_end(text)
        if end == len(text) and _ACTION_CLOSE.search(text) is None and first_action.group(2) != "/":
            return False  # no action closed yet
        tail = text[end:].lstrip().lower()
        if not tail:
            return False
        return not (tail.startswith("<action") or "<action".startswith(tail))

    def remaining_thought(self) -> list[str]:
        """The Thought text held back until the end (a trailing '<' that opened no tag, say)."""
        if self._closed:
            return []
        thought, _ = _thought_region(self._text, final=True)
        return self._advance(thought)

    def finish(self) -> TextTurn:
        """The whole reply, parsed."""
        thought, _ = _thought_region(self._text, final=True)
        if not thought.startswith(self._emitted):
            thought = self._emitted  # never contradict what already streamed
        return _parse(self._text, thought, self.offered)


# ---- one turn ----------------------------------------------------------------------------------------------------


def complete_text_turn(
    client: ModelClient,
    *,
    model: str,
    messages: list[dict[str, Any]],
    settings: ModelSettings = DEFAULT_SETTINGS,
    offered: Collection[str],
    on_thought: Callable[[str], None],
) -> tuple[ModelResponse, TextTurn]:
    """Ask for one text-protocol reply: streamed when the client can (`stream`), the Thought handed to
    `on_thought` as it grows; else one `complete` call read at once. Raises ModelError like the client.

    The response's `tool_calls` are the parsed actions and its `content` the final answer (None otherwise), so
    the runner can treat it like a native turn; usage, model and finish reason are the call's. A stream is
    stopped as soon as the reply is complete (`TextProtocolParser.done`): small models tend to go on writing
    the tool's result themselves, which would cost generation time and never be used."""
    parser = TextProtocolParser(offered)

    def on_text(delta: str) -> bool:
        for thought in parser.feed(delta):
            on_thought(thought)
        return not parser.done  # False stops a stream: what the model would write next is never used

    stream: Callable[..., ModelResponse] | None = getattr(client, "stream", None)
    if callable(stream):
        response = stream(model=model, messages=messages, tools=(), settings=settings, on_text=on_text)
    else:
        response = client.complete(model=model, messages=messages, tools=(), settings=settings)
        on_text(response.content or "")
    for thought in parser.remaining_thought():
        on_thought(thought)
    turn = parser.finish()
    if not turn.calls and turn.final is None and response.tool_calls:
        # Some servers parse tool-call-looking text into native calls even without tools offered.
        turn = TextTurn(turn.raw, turn.thought, list(response.tool_calls), None, None)
    response.tool_calls = list(turn.calls)
    response.content = turn.final
    return response, turn
