"""The usage page: credits per day (chart), per assistant and per scenario, the remaining balance, and per
assistant how often the AI handed conversations to people and how often it resolved them itself."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from helpdesk.models import Membership
from helpdesk.views.base import account_view, frame_context

from ..models import TRIAGE_KEY, Run, Scenario
from ..selectors import CREDIT_USAGE_DAYS, credit_usage

CHART_WIDTH = 720
CHART_HEIGHT = 160
HANDED_OVER = (Run.Outcome.HUMAN_HANDOFF, Run.Outcome.ERROR)


@dataclass(frozen=True)
class Bar:
    day: dt.date
    credits: int
    x: float
    y: float
    width: float
    height: float


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


def chart_bars(by_day: list[dict], *, days: int, today: dt.date) -> tuple[list[Bar], int]:
    """One bar per day of the window (days without usage are zero), scaled to the chart; and the max."""
    credits = {row["date"]: row["credits"] for row in by_day}
    dates = [today - dt.timedelta(days=days - 1 - i) for i in range(days)]
    peak = max([credits.get(d, 0) for d in dates] + [1])
    slot = CHART_WIDTH / days
    bars = []
    for i, day in enumerate(dates):
        value = max(credits.get(day, 0), 0)
        height = (CHART_HEIGHT - 20) * value / peak
        bars.append(Bar(day, value, i * slot + 1, CHART_HEIGHT - 15 - height, slot - 2, height))
    return bars, peak


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


@require_GET
@account_view(admin_only=True)
def usage_page(request: HttpRequest, membership: Membership) -> HttpResponse:
    account_id = membership.account_id
    usage = credit_usage(account_id=account_id, days=CREDIT_USAGE_DAYS)
    bars, peak = chart_bars(usage.by_day, days=CREDIT_USAGE_DAYS, today=timezone.localdate())
    titles = dict(
        Scenario.objects.filter(assistant__account_id=account_id).values_list("key", "title").order_by("-id")
    )
    titles[TRIAGE_KEY] = "Triage assistant"
    by_scenario = [
        {"agent_key": row["agent_key"], "title": titles.get(row["agent_key"], row["agent_key"] or "—"), **row}
        for row in usage.by_agent_key
    ]
    since = timezone.now() - dt.timedelta(days=CREDIT_USAGE_DAYS)
    context = frame_context(
        request,
        membership,
        usage=usage,
        bars=bars,
        peak=peak,
        total_period=sum(b.credits for b in bars),
        chart_width=CHART_WIDTH,
        chart_height=CHART_HEIGHT,
        by_scenario=by_scenario,
        rates=assistant_rates(account_id=account_id, since=since),
        days=CREDIT_USAGE_DAYS,
    )
    return render(request, "captain/usage.html", context)
