"""Reports for the account's administrators: a page and a CSV export of the same figures
(helpdesk.selectors.reports says what each figure means and how it is computed).

Administrators only, like the usage page: the report compares colleagues (each agent's conversations and
resolutions) and shows satisfaction ratings of their work; that is for whoever runs the team, not for every
agent. Agents get 403, people of another account 404.
"""

from __future__ import annotations

import csv
from datetime import timedelta

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import URLPattern, path
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from helpdesk.models import Membership
from helpdesk.selectors.reports import (
    ReportRange,
    ReportRangeError,
    account_report,
    report_csv_rows,
    report_range,
)
from helpdesk.selectors.sla import sla_breach_rates

from .base import ACCOUNT, account_view, frame_context

# A spreadsheet runs a cell that starts with one of these as a formula: names typed by people (inboxes,
# labels, usernames) are written with a leading apostrophe instead.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def duration_text(value: timedelta | None) -> str:
    """A duration as people read it: 45 s, 12 min, 3 h 5 min, 2 d 4 h; "-" when there is none."""
    if value is None:
        return "-"
    seconds = round(value.total_seconds())
    if seconds < 60:
        return _("%(s)d s") % {"s": seconds}
    minutes = seconds // 60
    if minutes < 60:
        return _("%(m)d min") % {"m": minutes}
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return _("%(h)d h %(m)d min") % {"h": hours, "m": minutes} if minutes else _("%(h)d h") % {"h": hours}
    days, hours = divmod(hours, 24)
    return _("%(d)d d %(h)d h") % {"d": days, "h": hours} if hours else _("%(d)d d") % {"d": days}


def percent_text(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f} %"


def _period(request: HttpRequest, membership: Membership) -> ReportRange:
    return report_range(
        account=membership.account, start=request.GET.get("start"), end=request.GET.get("end")
    )


@require_GET
@account_view(admin_only=True)
def report_page(request: HttpRequest, membership: Membership) -> HttpResponse:
    try:
        period = _period(request, membership)
    except ReportRangeError as exc:
        context = frame_context(
            request,
            membership,
            error=str(exc),
            start=request.GET.get("start", ""),
            end=request.GET.get("end", ""),
        )
        return render(request, "dashboard/reports.html", context, status=400)
    report = account_report(account=membership.account, period=period)
    context = frame_context(
        request,
        membership,
        report=report,
        start=period.start.isoformat(),
        end=period.end.isoformat(),
        duration_text={
            "first_median": duration_text(report.first_response.median),
            "first_p90": duration_text(report.first_response.p90),
            "resolution_median": duration_text(report.resolution.median),
            "resolution_p90": duration_text(report.resolution.p90),
        },
        rates={
            "ai_resolution": percent_text(report.ai_resolution_rate),
            "handoff": percent_text(report.handoff_rate),
            "csat_response": percent_text(report.csat_response_rate),
        },
        csat_average="-" if report.csat_average is None else f"{report.csat_average:.2f}",
        csat_distribution=sorted(report.csat_distribution.items(), reverse=True),
        sla_rates=[
            {**row, "percent": percent_text(row["rate"])}  # type: ignore[arg-type]
            for row in sla_breach_rates(
                account_id=membership.account_id, since=period.since, until=period.until
            )
        ],
    )
    return render(request, "dashboard/reports.html", context)


def _cell(value: str) -> str:
    return f"'{value}" if value.startswith(FORMULA_STARTS) else value


@require_GET
@account_view(admin_only=True)
def report_csv(request: HttpRequest, membership: Membership) -> HttpResponse:
    try:
        period = _period(request, membership)
    except ReportRangeError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    report = account_report(account=membership.account, period=period)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="report-{period.start}-to-{period.end}.csv"'
    writer = csv.writer(response)
    for figure, group, value in report_csv_rows(report):
        writer.writerow([figure, _cell(group), value])
    return response


urlpatterns: list[URLPattern] = [
    path(f"{ACCOUNT}reports/", report_page, name="reports"),
    path(f"{ACCOUNT}reports/export.csv", report_csv, name="reports-csv"),
]
