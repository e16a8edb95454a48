"""The run loop: one customer message in, one typed outcome out.

Shape borrowed from openai-agents-python v0.0.x: a bounded loop that asks the agent in charge for a response,
turns that response into a tiny typed "next step" (final output, run again, handoff, stop) and dispatches on
it. The loop is synchronous because it runs inside a Celery worker that handles one conversation at a time;
there is nothing to overlap, and no event loop to pay for.

The loop and the dispatch are here; the rest of a run is in its own modules:

- `run_state`: the next-step types, the runner's settings for one run and the run's bookkeeping;
- `model_calls`: one model call (system prompt, settings, the text tool protocol, usage);
- `responses`: a model response turned into the next step (replies, calls, handoffs, refusals, the loop
  guard, a planning agent's last call, the re-ask after a false transfer promise);
- `tool_calls`: tool execution (validation, confirmation holds and their settling, artifacts);
- `planning` and `text_protocol`: the planning mode and the text tool protocol;
- `hooks`: the `RunHooks` callbacks and `RunSpans`, the only way the run reaches OpenTelemetry.

What the loop guarantees (each rule has a test in tests/captain/runtime/test_runner.py):

- a model call, a tool, a handoff or a limit can end a run only in an `Outcome`; nothing raises out of `run`
  except programming errors of the host (an unknown start key, a hook that raises);
- the model can only reach what the agent in charge owns: its tools and its handoffs, nothing else;
- tool arguments are validated against the tool's JSON schema before the tool runs;
- model calls, wall-clock time and repeated identical calls are bounded.
"""

from __future__ import annotations

import time
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import TracerProvider

from . import planning
from . import semconv as sc
from .hooks import RunHooks, RunSpans
from .model import ModelClient, ModelError
from .model_calls import call_model
from .responses import force_final, process_model_response, promises_transfer, reask_for_handoff
from .run_state import (
    NextStep,
    NextStepFinalOutput,
    NextStepHandoff,
    NextStepRunAgain,
    NextStepStop,
    RunSettings,
    RunState,
)
from .tool_calls import settle_answered
from .types import Agent, ErrorKind, Outcome, RunContext, RunError, RunEvent, RunResult

__all__ = [
    "NextStep",
    "NextStepFinalOutput",
    "NextStepHandoff",
    "NextStepRunAgain",
    "NextStepStop",
    "RunHooks",
    "Runner",
]


class Runner:
    """Runs the AI team on one customer message, within fixed bounds."""

    def __init__(
        self,
        model: ModelClient,
        *,
        max_turns: int = 8,
        deadline_seconds: float | None = None,
        record_content: bool = True,
        hooks: RunHooks | None = None,
        tracer_provider: TracerProvider | None = None,
        loop_limit: int = 3,
        escalation_tool: str | None = "handoff_to_human",
        schema_with_tools: bool = False,
        artifact_threshold: int | None = 4000,
    ) -> None:
        """
        `max_turns` bounds model calls per run; `deadline_seconds` bounds wall time (checked before each model
        call, so one call's own timeout must also fit); `record_content` puts message bodies, tool arguments
        and results into spans (turn it off where spans leave the trust boundary); `loop_limit` is how many
        identical calls (same tool, same arguments) end the run; `tracer_provider` defaults to the global one;
        `artifact_threshold`: tool outputs longer than this many characters are stored as artifacts and the
        context gets a short reference (None: never).
        """
        if max_turns < 1:
            raise ValueError("max_turns must be at least 1")
        if loop_limit < 2:
            raise ValueError("loop_limit must be at least 2")
        self.model = model
        self.max_turns = max_turns
        self.deadline_seconds = deadline_seconds
        self.record_content = record_content
        self.hooks = hooks or RunHooks()
        self.loop_limit = loop_limit
        # The tool that hands a conversation to people. A reply that promises a transfer ("I'll connect you with
        # our team") may mean people rather than another agent, so the re-ask offers it beside the handoffs:
        # forcing a choice among specialists alone would send such a customer to the wrong one.
        self.escalation_tool = escalation_tool
        self.schema_with_tools = schema_with_tools
        self.artifact_threshold = artifact_threshold
        self._tracer = trace.get_tracer(sc.TRACER_NAME, tracer_provider=tracer_provider)

    # ---- the loop ------------------------------------------------------------------------------------------

    def run(
        self,
        *,
        agents: dict[str, Agent],
        start_key: str,
        messages: list[dict[str, Any]],
        context: RunContext,
    ) -> RunResult:
        """Answer the last message of `messages` (chat history without system prompt) starting with
        `start_key`.

        The caller opens its own run span around this call; the route, outcome and usage totals are set on the
        current span when the run ends.
        """
        if start_key not in agents:
            raise ValueError(f"start agent {start_key!r} is not in the team {sorted(agents)}")
        state = self._new_run(agents, messages, context)
        agent = agents[start_key]
        state.route.append(agent.key)
        settle_answered(state, agent)
        while True:
            step = self._run_agent(agent, state)
            if isinstance(step, NextStepHandoff):
                agent = step.new_agent
                continue
            # `_run_agent` returns only when the agent answered, handed off or the run stopped.
            assert not isinstance(step, NextStepRunAgain)
            outcome = step.output if isinstance(step, NextStepFinalOutput) else step.outcome
            break
        self._close_plan(agent, outcome, state)
        result = RunResult(
            outcome=outcome,
            agent_key=agent.key,
            usage=state.usage,
            route=state.route,
            events=state.events,
            artifacts=list(context.artifacts),
            plan=context.plan,
        )
        RunSpans.annotate_run(result, state.turns)
        return result

    def _new_run(
        self, agents: dict[str, Agent], messages: list[dict[str, Any]], context: RunContext
    ) -> RunState:
        settings = RunSettings(
            model=self.model,
            max_turns=self.max_turns,
            deadline_seconds=self.deadline_seconds,
            loop_limit=self.loop_limit,
            escalation_tool=self.escalation_tool,
            schema_with_tools=self.schema_with_tools,
            artifact_threshold=self.artifact_threshold,
        )
        return RunState(
            settings=settings,
            hooks=self.hooks,
            spans=RunSpans(self._tracer, record_content=self.record_content),
            context=context,
            agents=agents,
            history=messages,
            started=time.monotonic(),
        )

    def _run_agent(self, agent: Agent, state: RunState) -> NextStep:
        """One activation: ask `agent` until it answers, hands off, or the run stops."""
        with state.spans.agent(agent, state.context) as span:
            self.hooks.on_agent_start(state.context, agent)
            if agent.planning is not None:
                planning.own_plan(state.context, agent.key)
            step = self._run_turn(agent, state)
            while isinstance(step, NextStepRunAgain):
                step = self._run_turn(agent, state)
            if isinstance(step, NextStepStop) and isinstance(step.outcome, RunError):
                state.spans.agent_failed(span, step.outcome.error)
            return step

    def _run_turn(self, agent: Agent, state: RunState) -> NextStep:
        """One turn of `agent`: the limits, one model call, and its response as the next step."""
        limited = state.check_limits(agent)
        if limited is not None:
            return limited
        if agent.planning is not None and state.tool_calls >= agent.planning.max_tool_calls:
            return force_final(state, agent)
        tools = state.tools_for(agent)
        if state.withheld:
            tools = [t for t in tools if t["function"]["name"] not in state.withheld]
            state.withheld = set()
        try:
            response = call_model(state, agent, tools)
        except ModelError as exc:
            error: ErrorKind = "model_timeout" if exc.kind == "timeout" else "model_error"
            return NextStepStop(RunError(error, str(exc)))
        step = process_model_response(state, agent, response)
        if isinstance(step, NextStepFinalOutput) and promises_transfer(state, agent, step.output.text):
            step = reask_for_handoff(state, agent, step)
        return step

    def _close_plan(self, agent: Agent, outcome: Outcome, state: RunState) -> None:
        plan = state.context.plan
        if plan is None or not plan.steps:
            return
        planning.close_plan(plan, outcome, state.tool_calls)
        # Always recorded: the debug log shows the plan as the run left it.
        state.emit(agent, RunEvent("plan", agent.key, detail="end of run", data={"plan": plan.as_record()}))
