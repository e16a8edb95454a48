"""Plain runtime objects: agents, tools, handoffs, the run context and the typed outcome of a run.

Nothing here imports Django or the `openai` SDK, so the runtime can be unit-tested with a scripted model and
reused outside the helpdesk.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

HANDOFF_PREFIX = "handoff_to_"
MAX_TOOL_NAME_LENGTH = 64  # the OpenAI function-name limit; Chatwoot's handoff keys obey it too


def content_text(content: Any) -> str:
    """A chat message content's text: the string itself, or the text parts of a content list (a customer's
    message with images), images left out."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return "" if content is None else str(content)


def handoff_tool_name(agent_key: str) -> str:
    """The stable tool name a model calls to transfer control to the agent with this key."""
    return f"{HANDOFF_PREFIX}{agent_key}"


@dataclass
class Usage:
    """Token and request counts accumulated over a run (and over every agent in it)."""

    requests: int = 0
    """Number of model calls made."""
    input_tokens: int = 0
    """Prompt tokens reported by the model endpoint."""
    output_tokens: int = 0
    """Completion tokens reported by the model endpoint."""
    cached_input_tokens: int = 0
    """Of the prompt tokens, those the endpoint took from its prompt cache instead of reading them again
    (`prompt_tokens_details.cached_tokens`; 0 when it does not say)."""

    def add(self, other: Usage) -> None:
        self.requests += other.requests
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cached_input_tokens += other.cached_input_tokens

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class PendingCall:
    """A tool call that changes something, held until the customer confirms it in the conversation."""

    tool: str
    arguments: dict[str, Any]
    question: str
    """What the customer is asked to confirm (the tool's confirmation text over the arguments)."""
    agent_key: str


@dataclass(frozen=True)
class ConfirmedCall:
    """A held call the customer answered: `confirmed` runs it as stored, before the model is asked; otherwise
    the model is told it was not done."""

    tool: str
    arguments: dict[str, Any]
    confirmed: bool
    note: str = ""
    """For the model: what the customer answered."""


@dataclass(frozen=True)
class Artifact:
    """A long tool output kept out of the context: the context gets a short reference to `ref`."""

    ref: str
    tool: str
    content: str


@dataclass
class PlanStep:
    text: str
    done: bool = False


@dataclass
class PlanState:
    """A planning-mode agent's todo list; the host loads it before a run and stores it after."""

    agent_key: str
    goal: str = ""
    steps: list[PlanStep] = field(default_factory=list)
    status: Literal["active", "waiting", "done", "abandoned"] = "active"
    waiting_for: str = ""
    tool_calls: int = 0
    """Tool calls made for this plan over all runs."""
    history: list[dict[str, Any]] = field(default_factory=list)
    """Earlier states (as_record), oldest first."""

    def as_record(self) -> dict[str, Any]:
        return {
            "goal": self.goal,
            "steps": [{"text": s.text, "done": s.done} for s in self.steps],
            "status": self.status,
            "waiting_for": self.waiting_for,
            "tool_calls": self.tool_calls,
        }

    @property
    def done_count(self) -> int:
        return sum(1 for s in self.steps if s.done)


@dataclass(frozen=True)
class PlanningSettings:
    """Planning mode for an agent (captain.runtime.planning)."""

    max_tool_calls: int = 10
    """Tool calls per customer message at most (plan and think included)."""
    no_progress_limit: int = 4
    """Tool calls in a row that mark no step done before the run stops as a loop."""


@dataclass
class RunContext:
    """What tools may know about the run. It never reaches the model."""

    account_id: int
    """Tenant of the conversation; tools scope every query to it."""
    conversation_id: int | None
    """Conversation being answered (None in a playground run)."""
    usage: Usage = field(default_factory=Usage)
    """Accumulated over the whole run."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Free slot for the host application (e.g. the assistant id, a dry-run flag)."""
    plan: PlanState | None = None
    """The conversation's plan (planning mode), loaded by the host; the runner updates it in place."""
    answered: ConfirmedCall | None = None
    """The customer's answer to a held call: the runner settles it before the first model call."""
    artifacts: list[Artifact] = field(default_factory=list)
    """Long tool outputs of this run, referenced from the context."""


@dataclass(frozen=True)
class ToolOutput:
    """What a tool function returns."""

    content: str
    """Text given back to the model as the tool result."""
    outcome: Outcome | None = None
    """When set, the run ends with this outcome (e.g. a human handoff) after the tool call."""


class ToolFailed(Exception):
    """Raised by a tool whose call failed in a way the model can act on (an HTTP error, a refused address, an
    unreadable answer): `str(exc)` is given to the model as the tool's error and shown in the debug log, so it
    must be short and hold no secret."""


ToolFunction = Callable[[RunContext, dict[str, Any]], "ToolOutput | str"]


@dataclass(frozen=True)
class Tool:
    """A function the model may call. Arguments are validated against `parameters` before `function` runs."""

    name: str
    """Function name shown to the model; unique within an agent."""
    description: str
    """What the tool does and when to use it, shown to the model."""
    parameters: dict[str, Any]
    """JSON schema of the arguments object (type object, properties, required, additionalProperties false)."""
    function: ToolFunction
    """Called with the run context and the validated arguments."""
    confirm: Callable[[dict[str, Any]], str] | None = None
    """Set for a tool that changes something: the question the customer must confirm before the call runs
    (given the validated arguments). None: the call runs at once."""


@dataclass(frozen=True)
class Handoff:
    """An edge from one agent to another, offered to the model as a `handoff_to_<key>` tool."""

    target_key: str
    """Key of the agent that takes over."""
    description: str
    """When to transfer, shown to the model as the tool description."""

    @property
    def tool_name(self) -> str:
        return handoff_tool_name(self.target_key)


@dataclass
class Agent:
    """One member of the AI team: the triage assistant or a scenario specialist."""

    key: str
    """Stable key: the handoff target name and what a conversation stores as 'agent in charge'."""
    name: str
    """Human-readable name for logs and the dashboard."""
    instructions: str
    """Fully rendered system prompt: what stays the same from turn to turn (safety rules, persona, the builder's
    instructions, the reply format)."""
    model: str
    """Model name passed to the Chat Completions API."""
    temperature: float = 0.0
    tools: list[Tool] = field(default_factory=list)
    """Function tools this agent owns (its allowlist)."""
    handoffs: list[Handoff] = field(default_factory=list)
    """Agents this agent may transfer to (its handoff allowlist)."""
    structured: bool = False
    """Answers as `{"response", "reasoning"}` (captain.runtime.structured); its instructions must say so."""
    model_client: Any = None
    """The ModelClient this agent's calls go to when it is not the run's (a specialist on another endpoint)."""
    planning: PlanningSettings | None = None
    """Planning mode (a todo list, bounded tool calls, a summary that ends the task); None: the plain loop."""
    tool_protocol: Literal["native", "text"] = "native"
    """`text` for a model that cannot return native tool calls: tools are described in the prompt and the
    model writes Thought/action tags (captain.runtime.text_protocol)."""
    context: str = ""
    """What changes from turn to turn (the time, the customer, memory, this turn's sources), sent as a second
    system message after the instructions and the tool schemas: a server's prompt cache then keeps the fixed
    part, the longest, from one turn and one conversation to the next, and reads only what changed."""

    def tool(self, name: str) -> Tool | None:
        return next((t for t in self.tools if t.name == name), None)

    def handoff(self, tool_name: str) -> Handoff | None:
        return next((h for h in self.handoffs if h.tool_name == tool_name), None)


# ---- outcomes ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """The run produced a message for the customer."""

    text: str
    billable: bool = True
    """False for a fixed text no model wrote (nothing found, off topic): it costs no credit."""
    reasoning: str = ""
    """Why the model answered so (the `reasoning` of its structured reply): stored and shown in the debug log,
    never sent to the customer."""
    suggestions: tuple[str, ...] = ()
    """Follow-up questions offered with the reply as the channel's quick replies."""
    confirmation: PendingCall | None = None
    """The reply asks the customer to confirm this call; the host holds it until the next message."""
    kind: Literal["reply"] = "reply"


@dataclass(frozen=True)
class HumanHandoff:
    """The conversation goes to people. `reason` is for agents (a private note), never for the customer."""

    reason: str
    priority: str | None = None
    customer_message: str = ""
    """What the customer is told instead of the inbox's handoff message (the honest "I'm not sure, let me get a
    colleague" when a reply was not sent because no source supports it); empty: the configured message."""
    kind: Literal["human_handoff"] = "human_handoff"


@dataclass(frozen=True)
class Resolve:
    """The AI considers the conversation resolved."""

    reason: str = ""
    kind: Literal["resolve"] = "resolve"


ErrorKind = Literal[
    "model_error",
    "model_timeout",
    "max_turns",
    "empty_reply",
    "malformed_reply",
    "loop_detected",
    "deadline",
    "attempts_exhausted",
    "internal_error",
    "model_unavailable",
    "tool_budget",
]


@dataclass(frozen=True)
class RunError:
    """The run failed. The host turns this into a human handoff; `detail` is internal and never sent to a customer."""

    error: ErrorKind
    detail: str = ""
    kind: Literal["error"] = "error"


Outcome = Reply | HumanHandoff | Resolve | RunError


@dataclass(frozen=True)
class RunEvent:
    """One notable step of a run, kept for tests, the outcome service and the debug log."""

    type: Literal[
        "llm_call",
        "tool_call",
        "tool_refused",
        "tool_error",
        "handoff",
        "handoff_ignored",
        "handoff_refused",
        "tool_call_recovered",
        "transfer_promised",
        "route",
        "knowledge",
        "structured_reply",
        "memory",
        "shortcut",
        "plan",
        "thought",
        "artifact",
        "confirmation",
        "protocol_error",
    ]
    agent_key: str
    name: str = ""
    """Tool or handoff tool name (empty for llm_call)."""
    detail: str = ""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunResult:
    """What `Runner.run` returns."""

    outcome: Outcome
    agent_key: str
    """Agent in charge at the end of the run: it continues on the next customer message."""
    usage: Usage
    route: list[str]
    """Agent keys in the order they took control, starting with the starting agent."""
    events: list[RunEvent] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)
    """The knowledge put before the model this run, each marked `cited` when the reply used it."""
    artifacts: list[Artifact] = field(default_factory=list)
    """Long tool outputs stored out of the context this run."""
    plan: PlanState | None = None
    """The plan after the run (planning mode)."""
