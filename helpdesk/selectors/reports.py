"""Reports: what happened to the conversations created in a date range (the dashboard's report page, its CSV
export and the REST API all read `account_report`).

Every figure is about one cohort: the account's conversations CREATED in the range (account time zone, both
days included). A conversation created on Monday and resolved on Wednesday counts for Monday. That keeps
every rate between 0 and 100 % (the resolved, escalated and rated conversations are a part of the created ones)
and a past range's figures only change while its conversations are still open.

- Volume: conversations created, by inbox, by label (a conversation with two labels counts for both), by
  assignee (now), and AI vs people: resolved by the AI, by people, for inactivity, not resolved; handed to
  people = `escalated_at` set (at least once).
- First response time = first_reply_at - created_at (the first public answer, AI or people); resolution time =
  resolved_at - created_at (the last resolution; reopening clears it). Median (p50) and p90 by the
  NEAREST-RANK method: the p-th percentile of n sorted durations is the ceil(p/100 * n)-th of them, i.e. the
  smallest duration that at least p % of the conversations did not exceed. It is always a real conversation's
  duration (no interpolation), and with an even count the median is the lower middle one.
- AI resolution rate = resolved by the AI and never escalated / resolved; handoff rate = escalated / created.
- CSAT: responses of these conversations: average, count, distribution 1-5; response rate = responses /
  surveys requested (`csat_requested_at` set).

Cost: six queries whatever the number of conversations (one aggregate over the cohort, one GROUP BY each for
inbox, label and assignee, one for the durations only, one aggregate over the ratings).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.db.models import Avg, Count, Exists, F, FloatField, Func, OuterRef, Q, QuerySet
from django.utils import timezone

from helpdesk.models import Account, Conversation, CsatResponse, Label

DEFAULT_DAYS = 7
MAX_DAYS = 366


class SecondsBetween(Func):
    """`SecondsBetween(later, earlier)`: `later - earlier` in seconds (a float; NULL when either is NULL), computed
    by the database."""

    output_field = FloatField()
    arity = 2

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(
            compiler,
            connection,
            template="((julianday(%(expressions)s)) * 86400.0)",
            arg_joiner=") - julianday(",
            **extra,
        )

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(
            compiler,
            connection,
            template="EXTRACT(EPOCH FROM (%(expressions)s))::float",
            arg_joiner=" - ",
            **extra,
        )


class ReportRangeError(ValueError):
    """A date range a person typed that cannot be reported on; the message says what to type instead."""


@dataclass(frozen=True)
class ReportRange:
    start: date
    end: date
    """Both days included, in `time_zone`."""
    time_zone: str
    since: datetime
    until: datetime
    """[since, until): midnight at the start of `start` to midnight after `end`, in the account's time zone."""

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1


def _parse_day(value: str, name: str) -> date:
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        raise ReportRangeError(
            f"The {name} date {value!r} is not a date: write it as YYYY-MM-DD, e.g. 2026-11-24."
        ) from None


def report_range(*, account: Account, start: str | None = None, end: str | None = None) -> ReportRange:
    """The range from what a person typed (`YYYY-MM-DD`, both optional): by default the last 7 days, today
    included, in the account's time zone. Raises ReportRangeError with a message for the person."""
    zone = ZoneInfo(account.time_zone)
    today = timezone.now().astimezone(zone).date()
    end_day = _parse_day(end, "end") if end else today
    start_day = _parse_day(start, "start") if start else end_day - timedelta(days=DEFAULT_DAYS - 1)
    if start_day > end_day:
        raise ReportRangeError(f"The start date ({start_day}) is after the end date ({end_day}).")
    if (end_day - start_day).days + 1 > MAX_DAYS:
        raise ReportRangeError(f"A report covers at most {MAX_DAYS} days: choose a shorter range.")
    return ReportRange(
        start=start_day,
        end=end_day,
        time_zone=account.time_zone,
        since=datetime.combine(start_day, time.min, tzinfo=zone),
        until=datetime.combine(end_day + timedelta(days=1), time.min, tzinfo=zone),
    )


def nearest_rank(sorted_values: Sequence[timedelta], percent: float) -> timedelta | None:
    """The nearest-rank percentile of already sorted values: the ceil(percent/100 * n)-th value (1-based);
    None for no values."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(percent / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


@dataclass(frozen=True)
class DurationStats:
    count: int
    median: timedelta | None
    p90: timedelta | None

    @classmethod
    def of(cls, values: list[timedelta]) -> DurationStats:
        values = sorted(values)
        return cls(count=len(values), median=nearest_rank(values, 50), p90=nearest_rank(values, 90))


@dataclass(frozen=True)
class Group:
    """One row of a breakdown: a name and its counts."""

    name: str
    conversations: int
    resolved: int = 0
    escalated: int = 0


@dataclass(frozen=True)
class Report:
    period: ReportRange
    created: int
    resolved: int
    resolved_by_ai: int
    resolved_by_agent: int
    resolved_by_inactivity: int
    ai_resolved_without_escalation: int
    escalated: int
    unlabeled: int
    by_inbox: list[Group]
    by_label: list[Group]
    by_agent: list[Group]
    first_response: DurationStats
    resolution: DurationStats
    csat_requested: int
    csat_count: int
    csat_average: float | None
    csat_distribution: dict[int, int] = field(default_factory=dict)

    @property
    def unresolved(self) -> int:
        return self.created - self.resolved

    @property
    def ai_resolution_rate(self) -> float | None:
        return _ratio(self.ai_resolved_without_escalation, self.resolved)

    @property
    def handoff_rate(self) -> float | None:
        return _ratio(self.escalated, self.created)

    @property
    def csat_response_rate(self) -> float | None:
        return _ratio(self.csat_count, self.csat_requested)


def _ratio(part: int, whole: int) -> float | None:
    """part / whole, None when there is nothing to divide (shown as "-", never as 0 %)."""
    return part / whole if whole else None


def account_report(*, account: Account, period: ReportRange) -> Report:
    """Every figure of the report page for the conversations created in `period` (six queries)."""
    cohort = Conversation.objects.filter(
        account_id=account.pk, created_at__gte=period.since, created_at__lt=period.until
    ).order_by()
    totals = _cohort_totals(cohort)
    by_inbox = [
        Group(str(name), n, r, e) for _, name, n, r, e in _breakdown(cohort, "inbox_id", "inbox__name")
    ]
    by_agent = [
        Group(str(name) if key is not None else "Unassigned", n, r, e)
        for key, name, n, r, e in _breakdown(cohort, "assignee_id", "assignee__username")
    ]
    by_label = _by_label(account, period)
    first_response, resolution = _durations(cohort)
    csat = _csat(account, period)
    return Report(
        period=period,
        created=totals["created"],
        resolved=totals["resolved"],
        resolved_by_ai=totals["by_ai"],
        resolved_by_agent=totals["by_agent"],
        resolved_by_inactivity=totals["by_inactivity"],
        ai_resolved_without_escalation=totals["ai_alone"],
        escalated=totals["escalated"],
        unlabeled=totals["unlabeled"],
        by_inbox=by_inbox,
        by_label=by_label,
        by_agent=by_agent,
        first_response=DurationStats.of(first_response),
        resolution=DurationStats.of(resolution),
        csat_requested=totals["csat_requested"],
        csat_count=csat["count"],
        csat_average=float(csat["average"]) if csat["average"] is not None else None,
        csat_distribution={k: csat[str(k)] for k in range(1, 6)},
    )


_RESOLVED = Q(resolved_at__isnull=False)
_ESCALATED = Q(escalated_at__isnull=False)


def _cohort_totals(cohort: QuerySet[Conversation]) -> dict[str, Any]:
    """The cohort's counts, in one aggregate query."""
    has_label = Exists(Conversation.labels.through.objects.filter(conversation_id=OuterRef("pk")))
    return cohort.aggregate(
        created=Count("id"),
        resolved=Count("id", filter=_RESOLVED),
        by_ai=Count("id", filter=_RESOLVED & Q(resolved_by=Conversation.ResolvedBy.AI)),
        by_agent=Count("id", filter=_RESOLVED & Q(resolved_by=Conversation.ResolvedBy.AGENT)),
        by_inactivity=Count("id", filter=_RESOLVED & Q(resolved_by=Conversation.ResolvedBy.INACTIVITY)),
        ai_alone=Count(
            "id", filter=_RESOLVED & Q(resolved_by=Conversation.ResolvedBy.AI, escalated_at__isnull=True)
        ),
        escalated=Count("id", filter=_ESCALATED),
        unlabeled=Count("id", filter=~Q(has_label)),
        csat_requested=Count("id", filter=Q(csat_requested_at__isnull=False)),
    )


def _breakdown(
    cohort: QuerySet[Conversation], key: str, name: str
) -> list[tuple[object, str, int, int, int]]:
    """(key, name, created, resolved, escalated) per value of `key`, largest first: one GROUP BY query."""
    return list(
        cohort.values(key, name)
        .annotate(n=Count("id"), r=Count("id", filter=_RESOLVED), e=Count("id", filter=_ESCALATED))
        .order_by("-n", name)
        .values_list(key, name, "n", "r", "e")
    )


def _by_label(account: Account, period: ReportRange) -> list[Group]:
    """Conversations of the cohort per label (a conversation with two labels counts for both)."""
    label_rows = (
        Label.objects.filter(
            account_id=account.pk,
            conversations__created_at__gte=period.since,
            conversations__created_at__lt=period.until,
        )
        .values("name")
        .annotate(n=Count("conversations"))
        .order_by("-n", "name")
        .values_list("name", "n")
    )
    return [Group(name, n) for name, n in label_rows]


def _durations(cohort: QuerySet[Conversation]) -> tuple[list[timedelta], list[timedelta]]:
    """(first response times, resolution times) of the cohort's answered or resolved conversations."""
    # Only the two durations leave the database, as seconds computed by the database (SQLite's datetime
    # arithmetic through Django runs a Python function and parses two datetimes per row: 5x slower).
    durations = (
        cohort.filter(Q(first_reply_at__isnull=False) | _RESOLVED)
        .annotate(
            frt=SecondsBetween(F("first_reply_at"), F("created_at")),
            rt=SecondsBetween(F("resolved_at"), F("created_at")),
        )
        .values_list("frt", "rt")
    )
    first_response: list[timedelta] = []
    resolution: list[timedelta] = []
    for frt, rt in durations:
        if frt is not None:
            first_response.append(timedelta(seconds=round(frt, 3)))
        if rt is not None:
            resolution.append(timedelta(seconds=round(rt, 3)))
    return first_response, resolution


def _csat(account: Account, period: ReportRange) -> dict[str, Any]:
    """The cohort's CSAT responses: count, average and one count per rating ("1" to "5"), in one query."""
    rating = {str(k): Count("id", filter=Q(rating=k)) for k in range(1, 6)}
    return CsatResponse.objects.filter(
        account_id=account.pk,
        conversation__created_at__gte=period.since,
        conversation__created_at__lt=period.until,
        # The conversation's own account too: a response row can only count where its conversation does.
        conversation__account_id=account.pk,
    ).aggregate(count=Count("id"), average=Avg("rating"), **rating)


def _seconds(value: timedelta | None) -> int | None:
    return round(value.total_seconds()) if value is not None else None


def report_figures(report: Report) -> dict[str, object]:
    """The report as plain data (JSON for the API; the CSV export writes the same figures)."""

    def groups(rows: list[Group]) -> list[dict[str, object]]:
        return [
            {
                "name": g.name,
                "conversations": g.conversations,
                "resolved": g.resolved,
                "escalated": g.escalated,
            }
            for g in rows
        ]

    return {
        "range": {
            "start": report.period.start.isoformat(),
            "end": report.period.end.isoformat(),
            "time_zone": report.period.time_zone,
        },
        "conversations": {
            "created": report.created,
            "resolved": report.resolved,
            "unresolved": report.unresolved,
            "resolved_by_ai": report.resolved_by_ai,
            "resolved_by_people": report.resolved_by_agent,
            "resolved_for_inactivity": report.resolved_by_inactivity,
            "resolved_by_ai_without_handoff": report.ai_resolved_without_escalation,
            "handed_to_people": report.escalated,
            "without_label": report.unlabeled,
        },
        "by_inbox": groups(report.by_inbox),
        "by_label": [{"name": g.name, "conversations": g.conversations} for g in report.by_label],
        "by_agent": groups(report.by_agent),
        "rates": {"ai_resolution": report.ai_resolution_rate, "handoff": report.handoff_rate},
        "first_response_seconds": {
            "count": report.first_response.count,
            "median": _seconds(report.first_response.median),
            "p90": _seconds(report.first_response.p90),
        },
        "resolution_seconds": {
            "count": report.resolution.count,
            "median": _seconds(report.resolution.median),
            "p90": _seconds(report.resolution.p90),
        },
        "csat": {
            "average": round(report.csat_average, 2) if report.csat_average is not None else None,
            "responses": report.csat_count,
            "surveys_requested": report.csat_requested,
            "response_rate": report.csat_response_rate,
            "distribution": {str(k): v for k, v in report.csat_distribution.items()},
        },
    }


def report_csv_rows(report: Report) -> list[list[str]]:
    """The same figures as `report_figures`, one per row: figure, group, value. Durations in seconds, rates as
    fractions (0.25 = 25 %), empty when there is nothing to compute."""
    rows: list[list[str]] = [["figure", "group", "value"]]

    def add(name: str, group: str, value: object) -> None:
        rows.append([name, group, "" if value is None else str(value)])

    r = report.period
    add("range_start", "", r.start.isoformat())
    add("range_end", "", r.end.isoformat())
    add("time_zone", "", r.time_zone)
    for name, value in (
        ("created", report.created),
        ("resolved", report.resolved),
        ("unresolved", report.unresolved),
        ("resolved_by_ai", report.resolved_by_ai),
        ("resolved_by_people", report.resolved_by_agent),
        ("resolved_for_inactivity", report.resolved_by_inactivity),
        ("resolved_by_ai_without_handoff", report.ai_resolved_without_escalation),
        ("handed_to_people", report.escalated),
        ("without_label", report.unlabeled),
    ):
        add(f"conversations_{name}", "", value)
    for section, groups in (("inbox", report.by_inbox), ("agent", report.by_agent)):
        for g in groups:
            add(f"conversations_by_{section}", g.name, g.conversations)
            add(f"resolved_by_{section}", g.name, g.resolved)
            add(f"handed_to_people_by_{section}", g.name, g.escalated)
    for g in report.by_label:
        add("conversations_by_label", g.name, g.conversations)
    add("ai_resolution_rate", "", report.ai_resolution_rate)
    add("handoff_rate", "", report.handoff_rate)
    for name, stats in (("first_response", report.first_response), ("resolution", report.resolution)):
        add(f"{name}_count", "", stats.count)
        add(f"{name}_median_seconds", "", _seconds(stats.median))
        add(f"{name}_p90_seconds", "", _seconds(stats.p90))
    add("csat_average", "", round(report.csat_average, 2) if report.csat_average is not None else None)
    add("csat_responses", "", report.csat_count)
    add("csat_surveys_requested", "", report.csat_requested)
    add("csat_response_rate", "", report.csat_response_rate)
    for rating, n in report.csat_distribution.items():
        add("csat_rating_count", str(rating), n)
    return rows
