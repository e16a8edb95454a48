"""A planning agent's plan, kept with the conversation between customer messages (captain.runtime.planning)."""

from __future__ import annotations

from dataclasses import dataclass

from captain.actions.models import Plan
from captain.assistants.models import Assistant
from captain.runtime import PlanState, PlanStep
from helpdesk.models import Conversation

_OPEN = (Plan.Status.ACTIVE, Plan.Status.WAITING)


@dataclass
class LoadedPlan:
    """The open plan a run starts from, and its row: a run that ends with the same state object updates the
    row, one that started a new plan creates a new row (the old one is then closed)."""

    state: PlanState | None
    row: Plan | None


def plan_load(conversation: Conversation) -> LoadedPlan:
    row = Plan.objects.filter(conversation=conversation, status__in=_OPEN).order_by("-id").first()
    if row is None:
        return LoadedPlan(state=None, row=None)
    state = PlanState(
        agent_key=row.agent_key,
        goal=row.goal,
        steps=[PlanStep(text=str(s.get("text", "")), done=bool(s.get("done"))) for s in row.steps or []],
        status=row.status,  # type: ignore[arg-type]  # choices of the model field
        waiting_for=row.waiting_for,
        tool_calls=row.tool_calls,
        history=list(row.history or []),
    )
    return LoadedPlan(state=state, row=row)


def plan_store(
    *, conversation: Conversation, assistant: Assistant | None, loaded: LoadedPlan, state: PlanState | None
) -> Plan | None:
    """Store the plan as the run left it. A plan with no steps (the agent never planned) is not kept."""
    if state is None or not state.steps:
        return loaded.row
    fields = {
        "agent_key": state.agent_key,
        "goal": state.goal,
        "steps": [{"text": s.text, "done": s.done} for s in state.steps],
        "status": state.status,
        "waiting_for": state.waiting_for[:2000],
        "tool_calls": state.tool_calls,
        "history": state.history[-20:],
    }
    if loaded.row is not None and state is loaded.state:
        Plan.objects.filter(pk=loaded.row.pk).update(**fields)
        loaded.row.refresh_from_db()
        return loaded.row
    if loaded.row is not None and loaded.row.status in _OPEN:
        # The run started a new plan: the one it found open is over.
        Plan.objects.filter(pk=loaded.row.pk).update(status=Plan.Status.ABANDONED)
    return Plan.objects.create(
        account_id=conversation.account_id, assistant=assistant, conversation=conversation, **fields
    )


def plans_abandon(conversation: Conversation) -> int:
    """People took the conversation over: an open plan is not resumed by the AI later."""
    return Plan.objects.filter(conversation=conversation, status__in=_OPEN).update(
        status=Plan.Status.ABANDONED
    )
