"""Several `RunHooks` behind the one `hooks` slot of a `Runner`: the tracing hook and the live publisher (and
whatever a test adds) each see every callback, in the order they were given."""

from __future__ import annotations

from .model import ModelResponse, ToolCall
from .runner import RunHooks
from .types import Agent, RunContext, RunEvent


class FanOutHooks(RunHooks):
    """Calls each hook in order for every `RunHooks` method. A hook's exception propagates (a host bug, as for a
    single hook); hooks that must never break a run (the live publisher) swallow their own errors."""

    def __init__(self, *hooks: RunHooks) -> None:
        self.hooks: tuple[RunHooks, ...] = hooks

    def on_agent_start(self, context: RunContext, agent: Agent) -> None:
        for hook in self.hooks:
            hook.on_agent_start(context, agent)

    def on_llm_end(self, context: RunContext, agent: Agent, response: ModelResponse) -> None:
        for hook in self.hooks:
            hook.on_llm_end(context, agent, response)

    def on_tool_end(self, context: RunContext, agent: Agent, call: ToolCall, result: str) -> None:
        for hook in self.hooks:
            hook.on_tool_end(context, agent, call, result)

    def on_handoff(self, context: RunContext, from_agent: Agent, to_agent: Agent) -> None:
        for hook in self.hooks:
            hook.on_handoff(context, from_agent, to_agent)

    def on_event(self, context: RunContext, agent: Agent, event: RunEvent) -> None:
        for hook in self.hooks:
            hook.on_event(context, agent, event)

    def on_thought(self, context: RunContext, agent: Agent, delta: str) -> None:
        for hook in self.hooks:
            hook.on_thought(context, agent, delta)
