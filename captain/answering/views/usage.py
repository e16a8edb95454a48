"""The usage page: credits per day (chart), per assistant and per scenario, the remaining balance, and per
assistant how often the AI handed conversations to people and how often it resolved them itself. The figures
come from `captain.selectors`; this module only lays them out."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from captain.answering.selectors import CREDIT_USAGE_DAYS, assistant_rates, credit_usage
from captain.assistants.models import TRIAGE_KEY
from captain.assistants.selectors import scenario_titles
from helpdesk.models import Membership
from helpdesk.views.base import account_view, frame_context

CHART_WIDTH = 720
CHART_HEIGHT = 160


@dataclass(frozen=True)
class Bar:
    day: dt.date
    credits: int
    x: float
    y: float
    width: float
    height: float


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


@require_GET
@account_view(admin_only=True)
def usage_page(request: HttpRequest, membership: Membership) -> HttpResponse:
    account_id = membership.account_id
    usage = credit_usage(account_id=account_id, days=CREDIT_USAGE_DAYS)
    bars, peak = chart_bars(usage.by_day, days=CREDIT_USAGE_DAYS, today=timezone.localdate())
    titles = {**scenario_titles(account_id=account_id), TRIAGE_KEY: _("Triage assistant")}
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
