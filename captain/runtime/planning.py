"""Planning mode: a todo list for multi-step work, bounded, ending in a complete answer for the customer.

After seed 003's production ReAct planner. A planning agent gets four tools besides its own:

- `update_plan`: create the todo list, mark steps done and name the next step. The runner reminds the agent
  to do so after every other tool call, and counts progress by the steps marked done: a run that calls tools
  without finishing a step for `PlanningSettings.no_progress_limit` calls in a row is stopped as a loop (the
  "call A forever" failure), as is the same call three times (the runner's general loop guard);
- `think`: a general reasoning step for what no tool covers (comparing, computing, deciding); the thought is
  shown live in the playground and the debug log, never to the customer;
- `ask_customer`: pause for data only the customer has; the plan waits and resumes on the next message;
- `final_answer`: end the task with the complete answer for the customer, not a report of what was done.

The plan is plain data (`PlanState`) on the run context: the host loads it before a run and stores it after,
so a plan paused for a confirmation or a question continues on the next customer message. Nothing here
imports Django.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .types import Outcome, PlanState, PlanStep, Reply, RunContext, RunError, Tool, ToolFailed, ToolOutput

PLAN_TOOL = "update_plan"
THINK_TOOL = "think"
ASK_TOOL = "ask_customer"
ANSWER_TOOL = "final_answer"
SEARCH_ARTIFACT_TOOL = "search_artifact"
PLANNING_TOOL_NAMES = frozenset({PLAN_TOOL, THINK_TOOL, ASK_TOOL, ANSWER_TOOL, SEARCH_ARTIFACT_TOOL})

MAX_STEPS = 8
MAX_STEP_TOKENS = 800
TOOL_REMINDER = (
    f"(Reply by calling a tool: look up or change what you need with your tools, or call {ANSWER_TOOL} with the "
    f"complete answer, or {ASK_TOOL} to ask the customer.)"
)
FINAL_NOTE = "(No more tools. Now reply to the customer, using the results above.)"
UPDATE_REMINDER = "(Now call update_plan: mark the finished steps done and name the next step.)"

# A final answer that narrates the agent's own work ("I called get_order ...") instead of answering.
_REPORT = re.compile(
    r"\b(i (have )?(called|used|invoked|ran)|the tool|update_plan|final_answer|tool call)\b|调用了?工具",
    re.IGNORECASE,
)


def plan_text(plan: PlanState) -> str:
    """The plan as the model (and the debug log) reads it."""
    if not plan.steps:
        return "No plan yet."
    lines = [f"{i}. [{'x' if s.done else ' '}] {s.text}" for i, s in enumerate(plan.steps, 1)]
    if plan.waiting_for:
        lines.append(f"Waiting for the customer: {plan.waiting_for}")
    return "\n".join(lines)


def planning_prompt(plan: PlanState | None, *, calls_left: int) -> str:
    """Appended to a planning agent's system prompt on every call, so the model always sees the current list."""
    intro = (
        "You work through multi-step requests with a plan.\n"
        f"1. First call {PLAN_TOOL} with the steps (short, at most {MAX_STEPS}) and the next step.\n"
        f"2. Do one step at a time with your tools. After each tool result call {PLAN_TOOL}: mark done steps, "
        "name the next one.\n"
        f"3. Use {THINK_TOOL} to reason about a step no tool covers. If you need information only the customer "
        f"has, call {ASK_TOOL}.\n"
        f"4. When the work is done (or cannot be done), call {ANSWER_TOOL} with the complete answer for the "
        "customer: the facts and the result, not a report of which tools you called.\n"
        f"You may make {calls_left} more tool calls for this message."
    )
    if plan is None or not plan.steps:
        return intro
    return f"{intro}\n\nYour plan so far:\n{plan_text(plan)}"


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _plan(ctx: RunContext) -> PlanState:
    if ctx.plan is None:  # the runner sets one before a planning agent runs; a direct call still works
        ctx.plan = PlanState(agent_key="")
    return ctx.plan


def customer_facing(answer: str) -> bool:
    """False for an answer that narrates the agent's own work instead of answering the customer."""
    return not _REPORT.search(answer)


_TAGGED = re.compile(r"<final_answer>\s*(.*?)\s*(?:</final_answer>|$)", re.DOTALL | re.IGNORECASE)
_MARKUP = re.compile(r"^\s*thought:.*?(\n|$)|<action\b.*?(</action>|$)", re.DOTALL | re.IGNORECASE)


def plain_answer(text: str) -> str:
    """The customer's answer in a last, tool-less reply: a `<final_answer>` if the model still wrote one, else
    the text without a leading Thought line or action tags; "" when nothing is left."""
    tagged = _TAGGED.search(text)
    if tagged:
        return tagged.group(1).strip()
    return _MARKUP.sub("", text).strip()


def echoes_note(text: str, notes: Sequence[str] = (FINAL_NOTE, TOOL_REMINDER, UPDATE_REMINDER)) -> bool:
    """The model repeated one of our instructions or notes instead of answering (small models do): most of its
    words are the note's."""
    words = set(re.findall(r"\w+", text.lower()))
    if not words:
        return False
    return any(len(words & set(re.findall(r"\w+", note.lower()))) / len(words) > 0.6 for note in notes)


# ---- the plan across runs ----------------------------------------------------------------------------------


def own_plan(context: RunContext, agent_key: str) -> None:
    """The plan a planning agent works on: the conversation's open plan if it is this agent's, else a new
    one (a finished plan is history, not a task)."""
    plan = context.plan
    if plan is None or plan.agent_key != agent_key or plan.status in ("done", "abandoned"):
        context.plan = PlanState(agent_key=agent_key)
    elif plan.status == "waiting":
        plan.history.append(plan.as_record())
        plan.status = "active"
        plan.waiting_for = ""


def close_plan(plan: PlanState, outcome: Outcome, tool_calls: int) -> None:
    """The plan's state when the run ends (waiting for the customer, done, or abandoned), with the run's tool
    calls added to its count."""
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
    plan.tool_calls += tool_calls


# ---- the planning tools ------------------------------------------------------------------------------------


def update_plan(ctx: RunContext, args: dict[str, Any]) -> str:
    plan = _plan(ctx)
    steps = args.get("steps")
    if steps:
        # A rewritten list keeps the done marks of the steps it repeats.
        done = {s.text.strip().lower() for s in plan.steps if s.done}
        plan.steps = [PlanStep(text=t.strip(), done=t.strip().lower() in done) for t in steps[:MAX_STEPS]]
    for number in args.get("done") or []:
        if not 1 <= number <= len(plan.steps):
            raise ToolFailed(f"there is no step {number}; the plan has {len(plan.steps)} steps")
        plan.steps[number - 1].done = True
    if not plan.steps:
        raise ToolFailed("the plan has no steps yet: give `steps`")
    plan.status = "active"
    plan.waiting_for = ""
    next_step = str(args.get("next") or "").strip()
    return f"Plan updated.\n{plan_text(plan)}\nNext: {next_step or 'the first open step'}"


def think(ctx: RunContext, args: dict[str, Any]) -> str:
    return "Noted. Continue with the next step."


def ask_customer(ctx: RunContext, args: dict[str, Any]) -> ToolOutput:
    plan = _plan(ctx)
    question = args["question"].strip()
    plan.status = "waiting"
    plan.waiting_for = question
    return ToolOutput(content="The question was sent to the customer.", outcome=Reply(question))


def final_answer(ctx: RunContext, args: dict[str, Any]) -> ToolOutput:
    answer = args["answer"].strip()
    if not customer_facing(answer):
        raise ToolFailed(
            "write the answer the customer needs (the facts and the result), not what you did or which tools "
            "you used; call final_answer again"
        )
    plan = _plan(ctx)
    plan.status = "done"
    plan.waiting_for = ""
    return ToolOutput(content="Answer sent.", outcome=Reply(answer))


def search_artifact(ctx: RunContext, args: dict[str, Any]) -> str:
    """The parts of a long stored tool output that mention the query: the context holds only a reference."""
    artifact = next((a for a in ctx.artifacts if a.ref == args["ref"]), None)
    if artifact is None:
        known = ", ".join(a.ref for a in ctx.artifacts) or "none"
        raise ToolFailed(f"no artifact {args['ref']!r}; artifacts of this run: {known}")
    terms = [t for t in re.split(r"\W+", args["query"].lower()) if t]
    pieces = _records(artifact.content)
    hits = [p for p in pieces if all(t in p.lower() for t in terms)] or [
        p for p in pieces if any(t in p.lower() for t in terms)
    ]
    if not hits:
        return f"Nothing in {artifact.ref} mentions {args['query']!r}."
    return "\n".join(hits[:10])


def _records(content: str) -> list[str]:
    """A JSON list's items, one per piece (the usual long output: a list of orders); otherwise lines."""
    import json

    try:
        value = json.loads(content)
    except ValueError:
        return [line for line in content.splitlines() if line.strip()]
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list)]
        value = lists[0] if len(lists) == 1 else [value]
    if isinstance(value, list):
        return [json.dumps(item, ensure_ascii=False) for item in value]
    return [json.dumps(value, ensure_ascii=False)]


_SPECS: dict[str, tuple[str, dict[str, Any], Any]] = {
    PLAN_TOOL: (
        "Create or update your todo list: `steps` (the whole list, to create or rewrite it), `done` (numbers "
        "of finished steps), `next` (the next step).",
        _schema(
            {
                "steps": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1, "maxLength": 200},
                    "maxItems": MAX_STEPS,
                },
                "done": {"type": "array", "items": {"type": "integer", "minimum": 1}},
                "next": {"type": "string", "maxLength": 200},
            },
            [],
        ),
        update_plan,
    ),
    THINK_TOOL: (
        "Think through a step no tool covers (compare, compute, decide). Nobody else sees it.",
        _schema({"thought": {"type": "string", "minLength": 1, "maxLength": 2000}}, ["thought"]),
        think,
    ),
    ASK_TOOL: (
        "Ask the customer for information you need and only they have (e.g. the order number). The task "
        "continues when they answer.",
        _schema({"question": {"type": "string", "minLength": 1, "maxLength": 1000}}, ["question"]),
        ask_customer,
    ),
    ANSWER_TOOL: (
        "Finish: the complete answer for the customer (facts and result, in their language).",
        _schema({"answer": {"type": "string", "minLength": 1, "maxLength": 4000}}, ["answer"]),
        final_answer,
    ),
    SEARCH_ARTIFACT_TOOL: (
        "Search a long tool result stored as an artifact (e.g. A1) for the part you need.",
        _schema(
            {
                "ref": {"type": "string", "pattern": "^A[0-9]{1,3}$"},
                "query": {"type": "string", "minLength": 1, "maxLength": 200},
            },
            ["ref", "query"],
        ),
        search_artifact,
    ),
}


def planning_tools(*, with_artifacts: bool) -> list[Tool]:
    """The planning tools, in the order offered; `search_artifact` only once the run has artifacts."""
    names = [PLAN_TOOL, THINK_TOOL, ASK_TOOL, ANSWER_TOOL] + (
        [SEARCH_ARTIFACT_TOOL] if with_artifacts else []
    )
    return [
        Tool(name=n, description=_SPECS[n][0], parameters=_SPECS[n][1], function=_SPECS[n][2]) for n in names
    ]
