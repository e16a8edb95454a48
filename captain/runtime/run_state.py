"""What one `Runner.run` call carries from step to step.

- the next steps the loop dispatches on (`NextStepFinalOutput`, `NextStepRunAgain`, `NextStepHandoff`,
  `NextStepStop`), as in openai-agents-python v0.0.x;
- `RunSettings`: the runner's bounds and switches, as the steps read them;
- `RunState`: the run's bookkeeping and the few operations every step shares (record an event, answer a call,
  list what the agent may call, check the limits).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from . import planning, text_protocol
from .hooks import RunHooks, RunSpans
from .model import ModelClient, ToolCall
from .schemas import HANDOFF_PARAMETERS, compiled, function_spec, schema_key
from .types import Agent, Outcome, Reply, RunContext, RunError, RunEvent, Tool, Usage

# ---- next steps: what the loop does after one model response -----------------------------------------------


def tool_specs(tools: list[Tool], agent: Agent) -> list[dict[str, Any]]:
    """Chat Completions tool definitions: `tools`, then one per handoff of `agent`."""
    specs = [function_spec(t.name, t.description, compiled(schema_key(t.parameters))[0]) for t in tools]
    specs += [function_spec(h.tool_name, h.description, HANDOFF_PARAMETERS) for h in agent.handoffs]
    return specs


@dataclass(frozen=True)
class NextStepFinalOutput:
    """The agent answered the customer."""

    output: Reply


@dataclass(frozen=True)
class NextStepRunAgain:
    """Tools ran; the same agent gets their results and is asked again."""


@dataclass(frozen=True)
class NextStepHandoff:
    """Another agent takes over and is asked next."""

    new_agent: Agent


@dataclass(frozen=True)
class NextStepStop:
    """The run ends without a model-written reply (a tool's outcome, a limit, an error)."""

    outcome: Outcome


NextStep = NextStepFinalOutput | NextStepRunAgain | NextStepHandoff | NextStepStop


# ---- one run -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunSettings:
    """The `Runner`'s settings for one run (see `Runner.__init__`)."""

    model: ModelClient
    max_turns: int
    deadline_seconds: float | None
    loop_limit: int
    escalation_tool: str | None
    schema_with_tools: bool
    artifact_threshold: int | None


@dataclass
class RunState:
    """Mutable bookkeeping of one `run` call, with the settings, hooks and spans every step of it uses."""

    settings: RunSettings
    hooks: RunHooks
    spans: RunSpans
    context: RunContext
    agents: dict[str, Agent]
    history: list[dict[str, Any]]
    """Conversation before this run (user/assistant messages), without system prompt."""
    started: float
    usage: Usage = field(default_factory=Usage)
    route: list[str] = field(default_factory=list)
    events: list[RunEvent] = field(default_factory=list)
    items: list[dict[str, Any]] = field(default_factory=list)
    """Assistant tool-call messages and tool results of this run; every later model call sees them."""
    turns: int = 0
    """Model calls made so far."""
    call_counts: dict[tuple[str, str], int] = field(default_factory=dict)
    """(tool name, canonical arguments) -> times the model asked for it; feeds the loop guard."""
    tool_specs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Tool definitions offered to each agent, built once per agent per run (again when artifacts appear)."""
    tool_calls: int = 0
    """Tool calls run so far (planning mode's budget; `update_plan` is bookkeeping and not counted)."""
    since_progress: int = 0
    """Tool calls since a planning agent last marked a step of its plan done."""
    answered_calls: set[tuple[str, str]] = field(default_factory=set)
    """(tool, canonical arguments) of the calls that succeeded this run: asking again gets the result already
    given, not a second request."""
    withheld: set[str] = field(default_factory=set)
    """Tools left out of the next model call (one the model just asked for again)."""
    notes: list[str] = field(default_factory=list)
    """Notes the run gave the model in its own words (a confirmation's outcome): a reply echoing one is refused."""
    planning_reasked: bool = False
    """A planning agent that answered without a tool was reminded once."""
    text_raw: str = ""
    """The last text-protocol response as the model wrote it (it goes back into the history as written)."""

    # ---- what every step records -------------------------------------------------------------------------

    def emit(self, agent: Agent, event: RunEvent) -> None:
        self.events.append(event)
        self.hooks.on_event(self.context, agent, event)

    def add_tool_result(self, call: ToolCall, content: str, agent: Agent | None = None) -> None:
        if agent is not None and agent.tool_protocol == "text":
            self.items.append(text_protocol.observation_item(call, content))
        else:
            self.items.append({"role": "tool", "tool_call_id": call.id, "content": content})

    def thought(self, agent: Agent, text: str, *, streamed: bool) -> None:
        """Record one thought; `streamed`: its pieces already went to `on_thought` as they were written."""
        if not text:
            return
        if not streamed:
            self.hooks.on_thought(self.context, agent, text)
        self.emit(agent, RunEvent("thought", agent.key, data={"text": text[:4000]}))

    # ---- what the agent may call -------------------------------------------------------------------------

    def agent_tools(self, agent: Agent) -> list[Tool]:
        """The agent's own tools, then what the run adds: the planning tools for a planning agent, and the
        artifact search once the run stored a long output."""
        artifacts = bool(self.context.artifacts)
        if agent.planning is not None:
            return [*agent.tools, *planning.planning_tools(with_artifacts=artifacts)]
        if artifacts:
            search = planning.planning_tools(with_artifacts=True)[-1]
            return [*agent.tools, search]
        return agent.tools

    def tool(self, agent: Agent, name: str) -> Tool | None:
        return next((t for t in self.agent_tools(agent) if t.name == name), None)

    def tools_for(self, agent: Agent) -> list[dict[str, Any]]:
        """The agent's allowlist as Chat Completions tool definitions: its tools, then one per handoff."""
        specs = self.tool_specs.get(agent.key)
        if specs is None:
            specs = tool_specs(self.agent_tools(agent), agent)
            self.tool_specs[agent.key] = specs
        return specs

    # ---- limits ------------------------------------------------------------------------------------------

    def turn_limit(self, agent: Agent | None) -> int:
        """Model calls per run: a planning agent needs one per tool call and one per plan update."""
        if agent is not None and agent.planning is not None:
            return max(self.settings.max_turns, 2 * agent.planning.max_tool_calls + 2)
        return self.settings.max_turns

    def check_limits(self, agent: Agent | None = None) -> NextStepStop | None:
        if self.turns >= self.turn_limit(agent):
            return NextStepStop(RunError("max_turns", f"stopped after {self.turns} model calls"))
        deadline = self.settings.deadline_seconds
        if deadline is not None:
            elapsed = time.monotonic() - self.started
            if elapsed >= deadline:
                return NextStepStop(RunError("deadline", f"{elapsed:.1f}s elapsed, deadline {deadline}s"))
        return None
