"""The debug log: every AI run of a conversation as a readable tree, read from the stored spans.

Modelled on Coze's debug log (seeds 000/001): for each run, the agents involved, each routing decision, each
model call with the messages sent and the raw output, each tool call with its arguments and result, the outcome
and what it cost. Prompts and model output are internal, so only the account's administrators may read it.

What the AI team did besides talking is shown per run too: the planning agent's plan states, its thoughts,
each custom tool's HTTP request and response, long tool outputs kept as artifacts, confirmations asked and
answered, and text-protocol errors. Credentials never reach this page: the custom-tool client redacts them
before recording, and the page redacts again (credential headers, every known secret of the account:
captain.answering.services.redaction) so a span recorded carelessly cannot leak one either.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from captain.actions.models import ToolConfirmation
from captain.actions.selectors import plan_list, tool_confirmation_list
from captain.answering.models import Run
from captain.answering.selectors import (
    credits_by_message,
    debug_log_runs,
    run_artifact_previews,
    spans_by_trace,
    spans_by_trace_id,
)
from captain.answering.services.live import conversation_run_in_progress
from captain.answering.services.redaction import account_secrets, scrub
from captain.copilot.models import CopilotRun
from captain.copilot.selectors import copilot_runs_for_conversation
from captain.dashboard.trace_tree import (
    NodeEvent,
    SpanNode,
    agents_involved,
    collect_events,
    count_kind,
    plan_view,
    scrub_spans,
    span_tree,
)
from helpdesk.models import Membership
from helpdesk.selectors import dashboard_conversation
from helpdesk.views.base import account_view, frame_context

logger = logging.getLogger(__name__)

RUNS_PER_PAGE = 10
ARTIFACT_PREVIEW_CHARS = 20_000
"""An artifact is shown up to this length (a 10 MB tool output would make the page unusable)."""


@dataclass
class RunLog:
    run: Run
    roots: list[SpanNode]
    agents: list[tuple[str, str]]
    credits: int | None
    """Net credits of the reply (charge minus refund); None when nothing was charged."""
    llm_calls: int
    tool_calls: int
    plans: list[NodeEvent] = field(default_factory=list)
    """The plan after each change in this run, in order."""
    thoughts: list[NodeEvent] = field(default_factory=list)
    protocol_errors: list[NodeEvent] = field(default_factory=list)
    http_calls: int = 0
    artifacts: list[ArtifactView] = field(default_factory=list)
    confirmations: list[ConfirmationView] = field(default_factory=list)


@dataclass
class ArtifactView:
    ref: str
    tool: str
    size: int
    content: str
    truncated: bool


@dataclass
class ConfirmationView:
    tool: str
    status: str
    status_label: str
    question: str
    arguments: str
    result: str
    role: str
    """In this run: "asked" (the run held the call and asked) or "answered" (the customer's answer ran it)."""


def _artifacts(runs: list[Run], secrets: list[str]) -> dict[int, list[ArtifactView]]:
    rows = run_artifact_previews(run_ids=[r.pk for r in runs], chars=ARTIFACT_PREVIEW_CHARS)
    grouped: dict[int, list[ArtifactView]] = defaultdict(list)
    for row in rows:
        grouped[row.run_id].append(
            ArtifactView(
                ref=row.ref,
                tool=row.tool_name,
                size=row.size,
                content=scrub(row.preview, secrets),
                truncated=row.size > ARTIFACT_PREVIEW_CHARS,
            )
        )
    return grouped


def _confirmation_view(row: ToolConfirmation, role: str, secrets: list[str]) -> ConfirmationView:
    return ConfirmationView(
        tool=row.tool_name,
        status=row.status,
        status_label=row.get_status_display(),
        question=scrub(row.question, secrets),
        arguments=scrub(_json(row.arguments), secrets),
        result=scrub(row.result, secrets),
        role=role,
    )


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def run_logs(
    runs: list[Run], *, secrets: list[str] | None = None, confirmations: Sequence[ToolConfirmation] = ()
) -> list[RunLog]:
    """Runs with their span trees: 1 query for the spans of all runs, 1 for their credits, 1 for their
    artifacts. `confirmations`: the conversation's, attached to the run that asked or the run it answered."""
    secrets = secrets or []
    spans = spans_by_trace(runs=runs)
    credits = credits_by_message(message_ids=[r.reply_message_id for r in runs if r.reply_message_id])
    with_artifacts = [r for r in runs if getattr(r, "has_artifacts", True)]
    artifacts = _artifacts(with_artifacts, secrets) if with_artifacts else {}
    logs = []
    for run in runs:
        roots = span_tree(scrub_spans(spans.get(run.trace_id, []), secrets) if run.trace_id else [])
        held = [
            _confirmation_view(c, "asked", secrets)
            for c in confirmations
            if run.reply_message_id and c.asked_message_id == run.reply_message_id
        ] + [
            _confirmation_view(c, "answered", secrets)
            for c in confirmations
            if run.trigger_message_id and c.answer_message_id == run.trigger_message_id
        ]
        logs.append(
            RunLog(
                run=run,
                roots=roots,
                agents=agents_involved(roots),
                credits=credits.get(run.reply_message_id) if run.reply_message_id else None,
                llm_calls=count_kind(roots, "llm"),
                tool_calls=count_kind(roots, "tool"),
                plans=collect_events(roots, "plan"),
                thoughts=collect_events(roots, "thought"),
                protocol_errors=collect_events(roots, "protocol_error"),
                http_calls=count_kind(roots, "http"),
                artifacts=artifacts.get(run.pk, []),
                confirmations=held,
            )
        )
    return logs


@dataclass
class PlanLog:
    """A plan of the conversation as stored now, with its earlier states."""

    agent_key: str
    current: dict[str, Any]
    history: list[dict[str, Any]]
    updated_at: Any


def conversation_plans(conversation_id: int, account_id: int, secrets: list[str]) -> list[PlanLog]:
    plans = []
    for row in plan_list(account_id=account_id, conversation_id=conversation_id):
        current = plan_view(
            {
                "goal": row.goal,
                "steps": row.steps,
                "status": row.status,
                "waiting_for": row.waiting_for,
                "tool_calls": row.tool_calls,
            }
        )
        history = [plan_view(h) for h in reversed(row.history or []) if isinstance(h, dict)]
        plans.append(
            PlanLog(
                agent_key=row.agent_key,
                current=scrub(current, secrets),
                history=scrub(history, secrets),
                updated_at=row.updated_at,
            )
        )
    return plans


COPILOT_RUNS_SHOWN = 20


@dataclass
class CopilotLog:
    """A copilot run an agent asked for in the conversation (captain.copilot.services.copilot), with its spans."""

    run: CopilotRun
    roots: list[SpanNode]
    output: str
    input_text: str


def copilot_logs(conversation_id: int, account_id: int, user_id: int, secrets: list[str]) -> list[CopilotLog]:
    """The newest copilot runs the viewer asked for in the conversation, with their span trees: 1 query for the
    runs, 1 for their spans. Only the viewer's own: a run belongs to its asker (`copilot_run_list`), and an
    administrator reading the debug log is no exception."""
    runs = copilot_runs_for_conversation(
        account_id=account_id, user_id=user_id, conversation_id=conversation_id, limit=COPILOT_RUNS_SHOWN
    )
    if runs and not secrets:
        # The page read no secrets for its AI runs (it had none to show): the copilot's spans still need them.
        secrets = account_secrets(account_id)
    spans = spans_by_trace_id(trace_ids=[r.trace_id for r in runs])
    return [
        CopilotLog(
            run=run,
            roots=span_tree(scrub_spans(spans.get(run.trace_id, []), secrets) if run.trace_id else []),
            output=scrub(run.output, secrets),
            input_text=scrub(run.input_text, secrets),
        )
        for run in runs
    ]


@require_GET
@account_view(admin_only=True)
def conversation_runs_page(
    request: HttpRequest, membership: Membership, conversation_id: int
) -> HttpResponse:
    """`?message=<id>` narrows to the run that a message triggered or that wrote it (links from the thread)."""
    conversation = dashboard_conversation(
        account_id=membership.account_id, conversation_id=conversation_id, user=request.user
    )
    message = request.GET.get("message", "")
    page_param = request.GET.get("page", "1")
    page = int(page_param) if page_param.isdigit() and int(page_param) > 0 else 1
    # One run more than a page: whether there is a next page.
    rows = debug_log_runs(
        conversation=conversation,
        message_id=int(message) if message.isdigit() else None,
        offset=(page - 1) * RUNS_PER_PAGE,
        limit=RUNS_PER_PAGE + 1,
    )
    has_next = len(rows) > RUNS_PER_PAGE
    shown = rows[:RUNS_PER_PAGE]
    secrets = account_secrets(
        membership.account_id,
        tools=any(getattr(r, "account_has_tool_secrets", True) for r in shown),
        endpoints=any(getattr(r, "account_has_endpoint_keys", True) for r in shown),
    )
    confirmations = (
        list(tool_confirmation_list(account_id=membership.account_id, conversation_id=conversation.pk))
        if any(getattr(r, "conversation_has_confirmations", True) for r in shown)
        else []
    )
    has_plans = any(getattr(r, "conversation_has_plans", True) for r in shown)
    # The copilot's runs are listed on the first page; a conversation without any costs no query for them.
    show_copilot = page == 1 and (
        not shown or any(getattr(r, "conversation_has_copilot_runs", True) for r in shown)
    )
    context = frame_context(
        request,
        membership,
        conversation=conversation,
        logs=run_logs(shown, secrets=secrets, confirmations=confirmations),
        plans=conversation_plans(conversation.id, membership.account_id, secrets) if has_plans else [],
        confirmations=[_confirmation_view(c, "", secrets) for c in confirmations],
        copilot_logs=(
            copilot_logs(conversation.id, membership.account_id, membership.user_id, secrets)
            if show_copilot
            else []
        ),
        live=conversation_run_in_progress(conversation.id),
        page=page,
        has_next=has_next,
        filtered=message.isdigit(),
    )
    return render(request, "captain/debug_log.html", context)
