"""Reads of runs, spans and credits for the debug log, the usage page and the conversation page."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Sum
from django.db.models.functions import Substr, TruncDate
from django.utils import timezone

from captain.actions.selectors import plans_exist, tool_confirmations_exist, tool_secrets_exist
from captain.answering.models import CreditBalance, CreditLedgerEntry, Run, RunArtifact, SpanRecord
from captain.assistants.selectors import endpoint_keys_exist
from captain.conf import captain_setting
from captain.copilot.selectors import copilot_runs_exist
from helpdesk.models import Conversation

CREDIT_USAGE_DAYS = 30


HANDED_OVER = (Run.Outcome.HUMAN_HANDOFF, Run.Outcome.ERROR)


@dataclass(frozen=True)
class CreditUsage:
    limit: int
    used: int
    remaining: int
    since: dt.date
    by_day: list[dict] = field(default_factory=list)
    by_assistant: list[dict] = field(default_factory=list)
    by_agent_key: list[dict] = field(default_factory=list)


def credit_usage(*, account_id: int, days: int = CREDIT_USAGE_DAYS) -> CreditUsage:
    """Balance plus the ledger of the last `days` days summed per day, assistant and agent (refunds count
    negative, so a refunded reply nets to zero)."""
    # A read creates nothing: an account without a balance row yet has the default limit its first charge
    # will create (captain.answering.services.credits.credit_balance_for).
    balance = CreditBalance.objects.filter(account_id=account_id).first() or CreditBalance(
        account_id=account_id, limit=captain_setting("DEFAULT_CREDIT_LIMIT")
    )
    since = timezone.now() - dt.timedelta(days=days)
    ledger = CreditLedgerEntry.objects.filter(account_id=account_id, created_at__gte=since)
    by_day = (
        ledger.annotate(date=TruncDate("created_at"))
        .values("date")
        .annotate(credits=Sum("amount"))
        .order_by("date")
    )
    by_assistant = (
        ledger.values("assistant_id", "assistant__name")
        .annotate(credits=Sum("amount"))
        .order_by("assistant_id")
    )
    by_agent_key = ledger.values("agent_key").annotate(credits=Sum("amount")).order_by("agent_key")
    return CreditUsage(
        limit=balance.limit,
        used=balance.used,
        remaining=balance.remaining,
        since=since.date(),
        by_day=[{"date": row["date"], "credits": row["credits"]} for row in by_day],
        by_assistant=[
            {
                "assistant_id": row["assistant_id"],
                "assistant_name": row["assistant__name"] or "",
                "credits": row["credits"],
            }
            for row in by_assistant
        ],
        by_agent_key=[{"agent_key": row["agent_key"], "credits": row["credits"]} for row in by_agent_key],
    )


def conversation_runs(*, conversation: Conversation) -> QuerySet[Run]:
    """AI runs of a conversation (newest first); the conversation comes from `access_conversation`."""
    return Run.objects.filter(conversation=conversation, account_id=conversation.account_id).order_by("-id")


def debug_log_runs(
    *, conversation: Conversation, message_id: int | None = None, offset: int, limit: int
) -> list[Run]:
    """One page of a conversation's runs for the debug log (newest first; `message_id`: only the run that
    message triggered or that wrote it), with their messages and assistant, in one query. Each run carries
    flags saying whether there is anything of the kinds the page reads separately, so a conversation without
    artifacts, plans, confirmations, copilot runs or credentials costs no query for them: `has_artifacts`,
    `conversation_has_plans`, `conversation_has_confirmations`, `conversation_has_copilot_runs`,
    `account_has_tool_secrets`, `account_has_endpoint_keys`."""
    conversation_id, account_id = OuterRef("conversation_id"), OuterRef("account_id")
    runs = (
        conversation_runs(conversation=conversation)
        .select_related("trigger_message", "reply_message", "assistant")
        .annotate(
            has_artifacts=Exists(RunArtifact.objects.filter(run=OuterRef("pk"))),
            conversation_has_plans=plans_exist(conversation_id=conversation_id),
            conversation_has_confirmations=tool_confirmations_exist(conversation_id=conversation_id),
            conversation_has_copilot_runs=copilot_runs_exist(conversation_id=conversation_id),
            account_has_tool_secrets=tool_secrets_exist(account_id=account_id),
            account_has_endpoint_keys=endpoint_keys_exist(account_id=account_id),
        )
    )
    if message_id is not None:
        runs = runs.filter(Q(trigger_message_id=message_id) | Q(reply_message_id=message_id))
    return list(runs[offset : offset + limit])


@dataclass(frozen=True)
class ArtifactPreview:
    run_id: int
    ref: str
    tool_name: str
    size: int
    preview: str
    """The content's first characters (the whole of it when it is shorter)."""


def run_artifact_previews(*, run_ids: list[int], chars: int) -> list[ArtifactPreview]:
    """The artifacts of these runs in order, each with its first `chars` characters only (a 10 MB tool output
    is not read whole): one query."""
    rows = (
        RunArtifact.objects.filter(run__in=run_ids)
        .annotate(preview=Substr("content", 1, chars))
        .defer("content")
        .order_by("id")
    )
    return [
        ArtifactPreview(
            run_id=row.run_id, ref=row.ref, tool_name=row.tool_name, size=row.size, preview=row.preview
        )
        for row in rows
    ]


def spans_by_trace_id(*, trace_ids: Iterable[str]) -> dict[str, list[SpanRecord]]:
    """The stored spans of these traces, grouped by trace id, in start order: one query (none for no ids)."""
    wanted = {trace_id for trace_id in trace_ids if trace_id}
    grouped: dict[str, list[SpanRecord]] = defaultdict(list)
    if wanted:
        for span in SpanRecord.objects.filter(trace_id__in=wanted).order_by("start_time", "id"):
            grouped[span.trace_id].append(span)
    return grouped


def spans_by_trace(*, runs: list[Run]) -> dict[str, list[SpanRecord]]:
    """The stored spans of these runs, grouped by trace id, in start order."""
    return spans_by_trace_id(trace_ids=[run.trace_id for run in runs])


def spans_for_trace(*, trace_id: str) -> list[SpanRecord]:
    """The stored spans of one trace (a playground turn's), in start order."""
    return list(SpanRecord.objects.filter(trace_id=trace_id).order_by("start_time", "id"))


@dataclass(frozen=True)
class AssistantRates:
    assistant_id: int | None
    name: str
    conversations: int
    """Conversations the AI worked on in the period (skipped runs do not count)."""
    runs: int
    handed_over: int
    resolved: int
    """Conversations the AI resolved without handing them to people."""

    @property
    def handoff_rate(self) -> float:
        return self.handed_over / self.conversations if self.conversations else 0.0

    @property
    def resolution_rate(self) -> float:
        return self.resolved / self.conversations if self.conversations else 0.0


def assistant_rates(*, account_id: int, since: dt.datetime) -> list[AssistantRates]:
    """Per assistant, from Run rows: one grouped query (assistant, conversation), folded here. Its size is the
    number of conversations the AI touched in the window, not the number of messages."""
    rows = (
        Run.objects.filter(account_id=account_id, created_at__gte=since)
        .exclude(outcome=Run.Outcome.SKIPPED)
        .values("assistant_id", "assistant__name", "conversation_id")
        .annotate(
            runs=Count("id"),
            handoffs=Count("id", filter=Q(outcome__in=HANDED_OVER)),
            resolves=Count("id", filter=Q(outcome=Run.Outcome.RESOLVE)),
        )
    )
    totals: dict[int | None, dict] = defaultdict(
        lambda: {"name": "", "conversations": 0, "runs": 0, "handed_over": 0, "resolved": 0}
    )
    for row in rows:
        entry = totals[row["assistant_id"]]
        entry["name"] = row["assistant__name"] or "(deleted assistant)"
        entry["conversations"] += 1
        entry["runs"] += row["runs"]
        entry["handed_over"] += bool(row["handoffs"])
        entry["resolved"] += bool(row["resolves"]) and not row["handoffs"]
    return [
        AssistantRates(assistant_id=k, **v) for k, v in sorted(totals.items(), key=lambda kv: kv[1]["name"])
    ]


def credits_by_message(*, message_ids: list[int]) -> dict[int, int]:
    """Net credits per reply message (a refunded reply nets to zero), one query for the page."""
    if not message_ids:
        return {}
    rows = (
        CreditLedgerEntry.objects.filter(message_id__in=message_ids)
        .values("message_id")
        .annotate(net=Sum("amount"))
        .values_list("message_id", "net")
    )
    return dict(rows)


def reply_cited_sources(*, message_ids: list[int]) -> dict[int, list[dict[str, object]]]:
    """Reply message id -> the knowledge sources its run cited (title, url, kind), one query."""
    if not message_ids:
        return {}
    out: dict[int, list[dict[str, object]]] = {}
    for message_id, sources in Run.objects.filter(reply_message_id__in=message_ids).values_list(
        "reply_message_id", "sources"
    ):
        cited = [
            {"title": s.get("title", ""), "url": s.get("url", ""), "kind": s.get("kind", "")}
            for s in sources or []
            if s.get("cited")
        ]
        if cited:
            out[message_id] = cited
    return out
