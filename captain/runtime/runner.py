"""The run loop: one customer message in, one typed outcome out.

Shape borrowed from openai-agents-python v0.0.x: a bounded loop that asks the agent in charge for a response,
turns that response into a tiny typed "next step" (final output, run again, handoff, stop) and dispatches on
it. The loop is synchronous because it runs inside a Celery worker that handles one conversation at a time;
there is nothing to overlap, and no event loop to pay for.

What the loop guarantees (each rule has a test in tests/captain/runtime/test_runner.py):

- a model call, a tool, a handoff or a limit can end a run only in an `Outcome`; nothing raises out of `run`
  except programming errors of the host (an unknown start key, a hook that raises);
- the model can only reach what the agent in charge owns: its tools and its handoffs, nothing else;
- tool arguments are validated against the tool's JSON schema before the tool runs;
- model calls, wall-clock time and repeated identical calls are bounded.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import TracerProvider

from . import planning, text_protocol
from . import semconv as sc
from .hooks import RunHooks, RunSpans, assistant_message
from .model import ModelClient, ModelError, ModelResponse, ToolCall
from .model_calls import call_model
from .run_state import (
    NextStep,
    NextStepFinalOutput,
    NextStepHandoff,
    NextStepRunAgain,
    NextStepStop,
    RunSettings,
    RunState,
)
from .schemas import parse_arguments
from .structured import parse_reply
from .text_tools import recover_text_tool_calls
from .tool_calls import execute_tool, repeat, settle_answered
from .types import (
    HANDOFF_PREFIX,
    Agent,
    ErrorKind,
    Handoff,
    Outcome,
    PlanState,
    Reply,
    RunContext,
    RunError,
    RunEvent,
    RunResult,
)


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
        state = RunState(
            settings=RunSettings(
                model=self.model,
                max_turns=self.max_turns,
                deadline_seconds=self.deadline_seconds,
                loop_limit=self.loop_limit,
                escalation_tool=self.escalation_tool,
                schema_with_tools=self.schema_with_tools,
                artifact_threshold=self.artifact_threshold,
            ),
            hooks=self.hooks,
            spans=RunSpans(self._tracer, record_content=self.record_content),
            context=context,
            agents=agents,
            history=messages,
            started=time.monotonic(),
        )
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

    def _run_agent(self, agent: Agent, state: RunState) -> NextStep:
        """One activation: ask `agent` until it answers, hands off, or the run stops."""
        with state.spans.agent(agent, state.context) as span:
            self.hooks.on_agent_start(state.context, agent)
            if agent.planning is not None:
                self._own_plan(agent, state)
            while True:
                step: NextStep | None = state.check_limits(agent)
                if step is not None:
                    break
                if agent.planning is not None and state.tool_calls >= agent.planning.max_tool_calls:
                    step = self._force_final(agent, state)
                    break
                tools = state.tools_for(agent)
                if state.withheld:
                    tools = [t for t in tools if t["function"]["name"] not in state.withheld]
                    state.withheld = set()
                try:
                    response = call_model(state, agent, tools)
                except ModelError as exc:
                    error: ErrorKind = "model_timeout" if exc.kind == "timeout" else "model_error"
                    step = NextStepStop(RunError(error, str(exc)))
                    break
                step = self._process_response(agent, response, state)
                if isinstance(step, NextStepFinalOutput) and self._promises_transfer(agent, step.output.text):
                    step = self._reask_for_handoff(agent, step, state)
                if not isinstance(step, NextStepRunAgain):
                    break
            if isinstance(step, NextStepStop) and isinstance(step.outcome, RunError):
                state.spans.agent_failed(span, step.outcome.error)
            return step

    # ---- model calls ---------------------------------------------------------------------------------------

    def _reask_for_handoff(self, agent: Agent, said: NextStepFinalOutput, state: RunState) -> NextStep:
        """The model said it would transfer the customer but called no tool (a false promise): ask once more
        with only the handoff tools and a call required; if it still calls none, keep its reply and stay."""
        event = RunEvent("transfer_promised", agent.key, detail=said.output.text[:200])
        if state.check_limits() is not None:
            state.emit(agent, dataclasses.replace(event, data={"result": "stayed: no turn left"}))
            return said
        if agent.tool_protocol == "text":
            return said  # the re-ask needs a forced native tool call
        transfer_names = self._transfer_names(agent)
        handoff_tools = [s for s in state.tools_for(agent) if s["function"]["name"] in transfer_names]
        try:
            response = call_model(state, agent, handoff_tools, tool_choice="required")
        except ModelError as exc:
            state.emit(agent, dataclasses.replace(event, data={"result": f"stayed: {exc.kind}"}))
            return said
        if not any(c.name in transfer_names for c in response.tool_calls):
            state.emit(agent, dataclasses.replace(event, data={"result": "stayed: no handoff on re-ask"}))
            return said
        state.emit(agent, dataclasses.replace(event, data={"result": "handoff on re-ask"}))
        step = self._process_response(agent, response, state)
        escalated = isinstance(step, NextStepStop) and not isinstance(step.outcome, RunError)
        return step if isinstance(step, NextStepHandoff) or escalated else said

    def _transfer_names(self, agent: Agent) -> set[str]:
        names = {h.tool_name for h in agent.handoffs}
        if self.escalation_tool and agent.tool(self.escalation_tool) is not None:
            names.add(self.escalation_tool)
        return names

    def _promises_transfer(self, agent: Agent, text: str) -> bool:
        """The reply announces a transfer (EN/ZH) although the agent called no transfer tool."""
        return bool(self._transfer_names(agent)) and bool(
            _PROMISE_EN.search(text) or _PROMISE_ZH.search(text)
        )

    # ---- one response -> next step -------------------------------------------------------------------------

    def _process_response(self, agent: Agent, response: ModelResponse, state: RunState) -> NextStep:
        said = (response.content or "").strip()
        if response.tool_calls and said and agent.tool_protocol == "native":
            # Text written next to native calls is the model's reasoning for them: visible, never sent.
            state.thought(agent, said, streamed=False)
        if not response.tool_calls:
            offered = [t.name for t in state.agent_tools(agent)] + [h.tool_name for h in agent.handoffs]
            recovered = recover_text_tool_calls(response.content, offered)
            if recovered:
                state.emit(
                    agent,
                    RunEvent(
                        "tool_call_recovered",
                        agent.key,
                        name=recovered[0].name,
                        detail="the model wrote its call as text",
                        data={"calls": [c.name for c in recovered]},
                    ),
                )
                response = dataclasses.replace(response, content=None, tool_calls=recovered)
        if not response.tool_calls:
            text = (response.content or "").strip()
            if not text:
                return NextStepStop(
                    RunError("empty_reply", f"{agent.key} returned neither text nor a tool call")
                )
            if agent.planning is not None and agent.tool_protocol == "native" and not state.planning_reasked:
                # A planning agent acts and answers only through tools. Plain text is most often a small model
                # answering from nothing ("I can't assist with that"): remind it once, then accept the text.
                state.planning_reasked = True
                state.emit(
                    agent, RunEvent("protocol_error", agent.key, detail="answered without a tool call")
                )
                state.items.append({"role": "assistant", "content": text})
                state.items.append({"role": "user", "content": planning.TOOL_REMINDER})
                return NextStepRunAgain()
            if (agent.planning is not None and planning.echoes_note(text)) or (
                state.notes and planning.echoes_note(text, state.notes)
            ):
                # Our words to the model ("The customer declined; nothing was done ...") are never the reply.
                return NextStepStop(RunError("malformed_reply", f"{agent.key} repeated an instruction"))
            if agent.structured:
                return self._structured_reply(agent, text, state)
            return NextStepFinalOutput(Reply(text))

        # Every call gets a tool result message, whatever happens to it: the Chat Completions API rejects a
        # history with an unanswered tool call, and the model learns from the refusal or error text.
        state.items.append(
            text_protocol.assistant_item(state.text_raw)
            if agent.tool_protocol == "text"
            else assistant_message(response)
        )
        accepted: tuple[ToolCall, Agent, str] | None = None
        for call in response.tool_calls:
            arguments, parse_error = parse_arguments(call.arguments)

            key = (call.name, call.arguments if parse_error else json.dumps(arguments, sort_keys=True))
            count = state.call_counts.get(key, 0) + 1
            state.call_counts[key] = count
            if count >= self.loop_limit:
                if agent.planning is not None and key in state.answered_calls:
                    # It has the result and keeps asking for it: one last call may only write the answer.
                    state.emit(agent, RunEvent("tool_refused", agent.key, name=call.name, detail="loop"))
                    state.add_tool_result(call, "Not run again: you already have this result.", agent)
                    return self._force_final(agent, state, why=f"{call.name} requested {count} times")
                detail = f"{call.name} requested {count} times with the same arguments"
                return NextStepStop(RunError("loop_detected", detail))

            tool = state.tool(agent, call.name)
            if tool is not None and key in state.answered_calls:
                repeat(state, agent, call)
                if agent.planning is not None and call.name not in planning.PLANNING_TOOL_NAMES:
                    # It has the result and asks for it again: one last call may only write the answer.
                    return self._force_final(agent, state, why=f"{call.name} requested again")
                continue
            if tool is not None:
                outcome = execute_tool(state, agent, tool, call, arguments, parse_error)
                last = state.events[-1] if state.events else None
                if last is not None and last.type == "tool_call" and last.data.get("call_id") == call.id:
                    state.answered_calls.add(key)
                if outcome is not None:
                    # The run is decided (e.g. handed to people): later calls in this response do not run, and
                    # a handoff in the same response no longer matters.
                    return NextStepStop(outcome)
                continue

            handoff = agent.handoff(call.name)
            if handoff is not None and handoff.target_key in state.agents:
                # Handoff arguments are read leniently: the only one is an optional free-text reason that
                # feeds no side effect, and refusing a transfer over it would strand the customer with the
                # wrong agent.
                reason = arguments.get("reason") if isinstance(arguments, dict) else None
                reason = reason if isinstance(reason, str) else ""
                if accepted is None:
                    target = state.agents[handoff.target_key]
                    accepted = (call, target, reason)
                    state.add_tool_result(call, f"transferred to {target.key}", agent)
                else:
                    self._ignore_handoff(agent, handoff, call, accepted[1], reason, state)
                continue

            self._refuse(agent, call, handoff, state)

        if accepted is not None:
            call, target, reason = accepted
            self._accept_handoff(agent, target, call, reason, state)
            return NextStepHandoff(target)
        return NextStepRunAgain()

    def _structured_reply(self, agent: Agent, text: str, state: RunState) -> NextStep:
        """The reply's `response` for the customer and its `reasoning` for the debug log; a reply in no readable
        shape ends the run (people take over) rather than sending raw JSON to a customer."""
        parsed = parse_reply(text)
        state.emit(
            agent,
            RunEvent(
                "structured_reply",
                agent.key,
                detail=parsed.shape,
                data={"shape": parsed.shape, "well_formed": parsed.well_formed},
            ),
        )
        if parsed.shape == "broken":
            return NextStepStop(RunError("malformed_reply", f"{agent.key} returned unreadable JSON"))
        return NextStepFinalOutput(Reply(parsed.text, reasoning=parsed.reasoning))

    # ---- confirmations, plans, artifacts, thoughts ---------------------------------------------------------

    def _own_plan(self, agent: Agent, state: RunState) -> None:
        """The plan a planning agent works on: the conversation's open plan if it is this agent's, else a new
        one (a finished plan is history, not a task)."""
        plan = state.context.plan
        if plan is None or plan.agent_key != agent.key or plan.status in ("done", "abandoned"):
            state.context.plan = PlanState(agent_key=agent.key)
        elif plan.status == "waiting":
            plan.history.append(plan.as_record())
            plan.status = "active"
            plan.waiting_for = ""

    def _close_plan(self, agent: Agent, outcome: Outcome, state: RunState) -> None:
        """The plan's state when the run ends: waiting for the customer, done, or abandoned."""
        plan = state.context.plan
        if plan is None or not plan.steps:
            return
        if isinstance(outcome, Reply):
            if outcome.confirmation is not None:
                plan.status, plan.waiting_for = "waiting", f"confirmation: {outcome.confirmation.question}"
            elif plan.status == "active":
                if all(s.done for s in plan.steps):
                    plan.status = "done"
                else:
                    plan.status, plan.waiting_for = "waiting", outcome.text[:300]
        elif isinstance(outcome, RunError) or outcome.kind == "human_handoff":
            plan.status = "abandoned"
        elif outcome.kind == "resolve":
            plan.status = "done"
        plan.tool_calls += state.tool_calls
        # Always recorded: the debug log shows the plan as the run left it.
        state.emit(
            agent,
            RunEvent("plan", agent.key, detail="end of run", data={"plan": plan.as_record()}),
        )

    def _force_final(self, agent: Agent, state: RunState, *, why: str = "") -> NextStep:
        """The tool budget is spent (or the agent loops on a result it has): one last call that may only write
        the final answer; none ends the run as `tool_budget` (or `loop_detected`)."""
        assert agent.planning is not None
        spent = why or f"{state.tool_calls} tool calls used, the limit is {agent.planning.max_tool_calls}"
        error: ErrorKind = "loop_detected" if why else "tool_budget"
        limited = state.check_limits(agent)
        if limited is not None:
            return limited
        # No tools at all on this call: small models answer from a result they have only when no tool is
        # offered (docs/actions.md), and a model that loops on a tool would call it again.
        state.items.append({"role": "user", "content": planning.FINAL_NOTE})
        try:
            response = call_model(state, agent, [])
        except ModelError as exc:
            return NextStepStop(RunError(error, f"{spent}; the final call failed: {exc.kind}"))
        said = planning.plain_answer(response.content or "")
        offered = [planning.ANSWER_TOOL, *(t.name for t in state.agent_tools(agent))]
        for call in recover_text_tool_calls(said, offered):
            # A call written as text although none was offered: only a final answer's text is usable.
            arguments, _ = parse_arguments(call.arguments)
            answer = arguments.get("answer") if call.name == planning.ANSWER_TOOL else None
            said = answer.strip() if isinstance(answer, str) else ""
            break
        if said and planning.customer_facing(said) and not planning.echoes_note(said):
            if agent.planning is not None and state.context.plan is not None:
                state.context.plan.status = "done"
            return NextStepFinalOutput(Reply(said))
        return NextStepStop(RunError(error, spent))

    def _refuse(self, agent: Agent, call: ToolCall, handoff: Handoff | None, state: RunState) -> None:
        """A call outside the agent's allowlist: answer it with a refusal and run nothing."""
        allowed = ", ".join(spec["function"]["name"] for spec in state.tool_specs[agent.key]) or "none"
        content = f"refused: unknown tool {call.name!r}. Tools you can call: {allowed}."
        if handoff is not None or call.name.startswith(HANDOFF_PREFIX):
            target = handoff.target_key if handoff is not None else call.name.removeprefix(HANDOFF_PREFIX)
            detail = "target is not in the team" if handoff is not None else "not in the handoff allowlist"
            with state.spans.handoff(agent.key, target, call, "refused") as span:
                state.spans.refused(span)
            state.emit(
                agent,
                RunEvent("handoff_refused", agent.key, name=call.name, detail=detail, data={"to": target}),
            )
        else:
            with state.spans.tool(call) as span:
                state.spans.refused(span)
            state.emit(
                agent,
                RunEvent("tool_refused", agent.key, name=call.name, detail="not in the tool allowlist"),
            )
        state.add_tool_result(call, content, agent)

    # ---- handoffs ------------------------------------------------------------------------------------------

    def _accept_handoff(
        self, agent: Agent, target: Agent, call: ToolCall, reason: str, state: RunState
    ) -> None:
        with state.spans.handoff(agent.key, target.key, call, "accepted") as span:
            state.spans.handoff_reason(span, reason)
        state.route.append(target.key)
        state.emit(
            agent,
            RunEvent(
                "handoff",
                agent.key,
                name=call.name,
                detail=reason,
                data={"from": agent.key, "to": target.key},
            ),
        )
        self.hooks.on_handoff(state.context, agent, target)

    def _ignore_handoff(
        self, agent: Agent, handoff: Handoff, call: ToolCall, chosen: Agent, reason: str, state: RunState
    ) -> None:
        """Only the first handoff of a response is honoured (as in the OpenAI Agents SDK)."""
        with state.spans.handoff(agent.key, handoff.target_key, call, "ignored"):
            pass
        state.emit(
            agent,
            RunEvent(
                "handoff_ignored", agent.key, name=call.name, detail=reason, data={"to": handoff.target_key}
            ),
        )
        content = f"ignored: only the first handoff in a response is honoured; transferring to {chosen.key}."
        state.add_tool_result(call, content, agent)


# ---- false transfer promises ----

_PROMISE_EN = re.compile(
    r"\b(i'?ll|i will|i am going to|i'm going to|let me|i'?m|i am|we'?ll|we will)\b[^.!?\n]{0,40}?"
    r"\b(transfer|connect|hand(ing)?\s+(you\s+)?over|redirect|forward|route|pass)\w*",
    re.IGNORECASE,
)
_PROMISE_ZH = re.compile(r"(为您|帮您|给您|帮你|为你|我来|我将|马上)[^。！？\n]{0,8}?(转接|转给|转到|转交)")
