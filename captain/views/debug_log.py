"""The debug log: every AI run of a conversation as a readable tree, read from the stored spans.

Modelled on Coze's debug log (seeds 000/001): for each run, the agents involved, each routing decision, each
model call with the messages sent and the raw output, each tool call with its arguments and result, the outcome
and what it cost. Prompts and model output are internal, so only the account's administrators may read it.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from helpdesk.models import Membership
from helpdesk.selectors import dashboard_conversation
from helpdesk.views.base import account_view, frame_context

from ..models import Run
from ..selectors import conversation_runs, credits_by_message, spans_by_trace
from .trace_tree import SpanNode, agents_involved, count_kind, span_tree

RUNS_PER_PAGE = 10


@dataclass
class RunLog:
    run: Run
    roots: list[SpanNode]
    agents: list[tuple[str, str]]
    credits: int | None
    """Net credits of the reply (charge minus refund); None when nothing was charged."""
    llm_calls: int
    tool_calls: int


def run_logs(runs: list[Run]) -> list[RunLog]:
    """Runs with their span trees: 1 query for the spans of all runs, 1 for their credits."""
    spans = spans_by_trace(runs=runs)
    credits = credits_by_message(message_ids=[r.reply_message_id for r in runs if r.reply_message_id])
    logs = []
    for run in runs:
        roots = span_tree(spans.get(run.trace_id, []) if run.trace_id else [])
        logs.append(
            RunLog(
                run=run,
                roots=roots,
                agents=agents_involved(roots),
                credits=credits.get(run.reply_message_id) if run.reply_message_id else None,
                llm_calls=count_kind(roots, "llm"),
                tool_calls=count_kind(roots, "tool"),
            )
        )
    return logs


@require_GET
@account_view(admin_only=True)
def conversation_runs_page(
    request: HttpRequest, membership: Membership, conversation_id: int
) -> HttpResponse:
    """`?message=<id>` narrows to the run that a message triggered or that wrote it (links from the thread)."""
    conversation = dashboard_conversation(account_id=membership.account_id, conversation_id=conversation_id)
    runs = conversation_runs(conversation=conversation).select_related(
        "trigger_message", "reply_message", "assistant"
    )
    message = request.GET.get("message", "")
    if message.isdigit():
        runs = runs.filter(Q(trigger_message_id=int(message)) | Q(reply_message_id=int(message)))
    page_param = request.GET.get("page", "1")
    page = int(page_param) if page_param.isdigit() and int(page_param) > 0 else 1
    rows = list(runs[(page - 1) * RUNS_PER_PAGE : page * RUNS_PER_PAGE + 1])
    has_next = len(rows) > RUNS_PER_PAGE
    context = frame_context(
        request,
        membership,
        conversation=conversation,
        logs=run_logs(rows[:RUNS_PER_PAGE]),
        page=page,
        has_next=has_next,
        filtered=message.isdigit(),
    )
    return render(request, "captain/debug_log.html", context)
