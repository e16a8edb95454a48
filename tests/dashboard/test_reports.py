"""Reports (helpdesk.selectors.reports, the report page, its CSV export and the REST endpoint) on seeded data.

Every expected value below is worked out by hand from the seed in `seeded` (the comments show the sums), not by
the code under test. The account is in Asia/Tokyo (UTC+9) so the range's edges are local midnights, not UTC's.
"""

from __future__ import annotations

import csv
import io
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from helpdesk.models import Conversation, CsatResponse, Label, Membership
from helpdesk.selectors.reports import (
    ReportRangeError,
    account_report,
    nearest_rank,
    report_range,
)
from tests.factories import AccountFactory, ConversationFactory, InboxFactory, MembershipFactory, UserFactory

from .conftest import count_queries

pytestmark = [pytest.mark.django_db]

TOKYO = ZoneInfo("Asia/Tokyo")
RANGE = {"start": "2026-03-02", "end": "2026-03-08"}
AI, AGENT, INACTIVITY = (
    Conversation.ResolvedBy.AI,
    Conversation.ResolvedBy.AGENT,
    Conversation.ResolvedBy.INACTIVITY,
)


def local(day: int, hour: int = 0, minute: int = 0, second: int = 0) -> datetime:
    return datetime(2026, 3, day, hour, minute, second, tzinfo=TOKYO)


def seed_conversation(inbox, created, *, labels=(), rating=None, **facts):
    """A conversation created at `created` with its reporting facts; `first_reply`/`resolved` are delays."""
    first_reply = facts.pop("first_reply", None)
    resolved = facts.pop("resolved", None)
    conversation = ConversationFactory(contact_inbox__inbox=inbox)
    values = {"created_at": created, **facts}
    if first_reply is not None:
        values["first_reply_at"] = created + first_reply
    if resolved is not None:
        values["resolved_at"] = created + resolved
        values["status"] = Conversation.Status.RESOLVED
    Conversation.objects.filter(pk=conversation.pk).update(**values)
    for name in labels:
        label, _ = Label.objects.get_or_create(account=inbox.account, name=name)
        conversation.labels.add(label)
    if rating is not None:
        CsatResponse.objects.create(account=inbox.account, conversation=conversation, rating=rating)
    return conversation


class Seed:
    pass


@pytest.fixture
def seeded(db):
    s = Seed()
    s.account = AccountFactory(name="Acme", time_zone="Asia/Tokyo")
    s.admin, s.agent = UserFactory(username="alice"), UserFactory(username="bob")
    MembershipFactory(account=s.account, user=s.admin, role=Membership.Role.ADMIN)
    MembershipFactory(account=s.account, user=s.agent)
    ann, ben = UserFactory(username="ann"), UserFactory(username="ben")
    MembershipFactory(account=s.account, user=ann)
    MembershipFactory(account=s.account, user=ben)
    web = InboxFactory(account=s.account, name="Web chat")
    email = InboxFactory(account=s.account, name="E-mail")
    s.email = email
    asked = {"csat_requested_at": local(9)}
    s1, m1, m10 = timedelta(seconds=1), timedelta(minutes=1), timedelta(minutes=10)

    # c1: the first instant of the range. AI answered in 30 s and resolved it in 10 min on its own. Rated 5.
    seed_conversation(
        web, local(2), labels=["refund"], first_reply=30 * s1, resolved=m10, resolved_by=AI, rating=5, **asked
    )
    # c2: handed to people, ann resolved it after 2 h. Rated 3.
    seed_conversation(
        web,
        local(3, 10),
        labels=["refund", "vip"],
        first_reply=m1,
        resolved=timedelta(hours=2),
        resolved_by=AGENT,
        escalated_at=local(3, 10, 5),
        assignee=ann,
        rating=3,
        **asked,
    )
    # c3: escalated, handed back, then resolved by the AI after 30 min (not "AI alone"). Asked, no rating.
    seed_conversation(
        email,
        local(4, 12),
        first_reply=2 * m1,
        resolved=30 * m1,
        resolved_by=AI,
        escalated_at=local(4, 12, 3),
        assignee=ben,
        **asked,
    )
    # c4: resolved for inactivity after 2 days; first answer after 10 min.
    seed_conversation(
        email,
        local(5, 9),
        labels=["vip"],
        first_reply=m10,
        resolved=timedelta(days=2),
        resolved_by=INACTIVITY,
        assignee=ann,
    )
    # c5: the last second of the range: no answer yet.
    seed_conversation(web, local(8, 23, 59, 59))
    # c6: escalated, still open with ben; answered in 45 s.
    seed_conversation(
        web,
        local(6, 8),
        labels=["refund"],
        first_reply=45 * s1,
        escalated_at=local(6, 8, 1),
        assignee=ben,
        status=Conversation.Status.OPEN,
    )

    # Outside the range by one second on each side: never counted.
    seed_conversation(
        web,
        local(1, 23, 59, 59),
        labels=["refund"],
        first_reply=s1,
        resolved=s1,
        resolved_by=AI,
        rating=1,
        **asked,
    )
    seed_conversation(
        web, local(9), labels=["vip"], first_reply=s1, escalated_at=local(9, 0, 1), assignee=ann
    )

    # Another account, same days, same label name: never counted, its people cannot open our reports.
    s.other = AccountFactory(name="Globex", time_zone="Asia/Tokyo")
    s.outsider = UserFactory(username="mallory")
    MembershipFactory(account=s.other, user=s.outsider, role=Membership.Role.ADMIN)
    theirs = InboxFactory(account=s.other, name="Globex secret inbox")
    for day in (2, 3, 4):
        seed_conversation(
            theirs,
            local(day, 12),
            labels=["refund", "globex-only"],
            first_reply=s1,
            resolved=s1,
            resolved_by=AI,
            rating=1,
            **asked,
        )
    return s


def report_for(seed, **dates):
    return account_report(account=seed.account, period=report_range(account=seed.account, **dates))


def test_figures_match_the_hand_computed_values(seeded):
    report = report_for(seeded, **RANGE)

    assert report.period.start.isoformat() == "2026-03-02" and report.period.end.isoformat() == "2026-03-08"
    assert report.created == 6  # c1..c6
    assert report.resolved == 4  # c1, c2, c3, c4
    assert report.unresolved == 2  # c5, c6
    assert (report.resolved_by_ai, report.resolved_by_agent, report.resolved_by_inactivity) == (2, 1, 1)
    assert report.escalated == 3  # c2, c3, c6
    assert report.ai_resolved_without_escalation == 1  # c1 (c3 was escalated)
    assert report.ai_resolution_rate == 0.25  # 1 / 4
    assert report.handoff_rate == 0.5  # 3 / 6
    assert report.unlabeled == 2  # c3, c5

    inbox = {g.name: (g.conversations, g.resolved, g.escalated) for g in report.by_inbox}
    assert inbox == {"Web chat": (4, 2, 2), "E-mail": (2, 2, 1)}
    assert [g.name for g in report.by_inbox] == ["Web chat", "E-mail"]  # most conversations first
    agent = {g.name: (g.conversations, g.resolved, g.escalated) for g in report.by_agent}
    assert agent == {"Unassigned": (2, 1, 0), "ann": (2, 2, 1), "ben": (2, 1, 2)}
    assert [(g.name, g.conversations) for g in report.by_label] == [("refund", 3), ("vip", 2)]

    # First response: 30, 45, 60, 120, 600 s. Nearest rank: p50 = ceil(2.5) = 3rd, p90 = ceil(4.5) = 5th.
    assert report.first_response.count == 5
    assert report.first_response.median == timedelta(seconds=60)
    assert report.first_response.p90 == timedelta(seconds=600)
    # Resolution: 600, 1800, 7200, 172800 s. p50 = ceil(2) = 2nd, p90 = ceil(3.6) = 4th.
    assert report.resolution.count == 4
    assert report.resolution.median == timedelta(minutes=30)
    assert report.resolution.p90 == timedelta(days=2)

    # CSAT: ratings 5 and 3 of 3 requests (c1, c2, c3).
    assert report.csat_count == 2 and report.csat_average == 4.0 and report.csat_requested == 3
    assert report.csat_response_rate == pytest.approx(2 / 3)
    assert report.csat_distribution == {1: 0, 2: 0, 3: 1, 4: 0, 5: 1}


def test_the_range_edges_are_local_midnights(seeded):
    # One day: only c1, created at 00:00:00 Tokyo on the 2nd (15:00 UTC on the 1st).
    assert report_for(seeded, start="2026-03-02", end="2026-03-02").created == 1
    # The 8th: c5 at 23:59:59 Tokyo is in; the conversation at 00:00 on the 9th is not.
    assert report_for(seeded, start="2026-03-08", end="2026-03-08").created == 1
    # The 1st alone: the conversation at 23:59:59 Tokyo on the 1st.
    day_before = report_for(seeded, start="2026-03-01", end="2026-03-01")
    assert day_before.created == 1 and day_before.csat_distribution[1] == 1
    # The same instants read in UTC would move c1 to the 1st: the account's zone decides.
    period = report_range(account=seeded.account, **RANGE)
    assert period.since == datetime(2026, 3, 1, 15, 0, tzinfo=ZoneInfo("UTC"))
    assert period.until == datetime(2026, 3, 8, 15, 0, tzinfo=ZoneInfo("UTC"))


def test_default_range_is_the_last_seven_days_today_included(seeded):
    period = report_range(account=seeded.account)
    today = timezone.now().astimezone(TOKYO).date()
    assert period.end == today and period.start == today - timedelta(days=6) and period.days == 7
    # Only a start: seven days ending today would be wrong; the end defaults to today.
    assert report_range(account=seeded.account, start="2026-03-02").end == today


@pytest.mark.parametrize(
    ("dates", "message"),
    [
        ({"start": "2026-13-01"}, "is not a date: write it as YYYY-MM-DD"),
        ({"start": "yesterday"}, "is not a date"),
        ({"start": "2026-03-09", "end": "2026-03-02"}, "is after the end date"),
        ({"start": "2025-01-01", "end": "2026-03-02"}, "at most 366 days"),
    ],
)
def test_bad_dates_are_refused_with_a_clear_message(seeded, admin_client_for, dates, message):
    with pytest.raises(ReportRangeError, match=message):
        report_range(account=seeded.account, **dates)
    client = admin_client_for(seeded.admin)
    page = client.get(f"/app/accounts/{seeded.account.id}/reports/", dates)
    assert page.status_code == 400 and message in page.content.decode()
    assert client.get(f"/app/accounts/{seeded.account.id}/reports/export.csv", dates).status_code == 400
    api = APIClient()
    api.force_authenticate(seeded.admin)
    response = api.get(f"/api/v1/accounts/{seeded.account.id}/reports/", dates)
    assert response.status_code == 400 and message in response.json()["detail"]


def test_nearest_rank_percentiles():
    values = [timedelta(seconds=s) for s in range(1, 11)]  # 1..10
    assert nearest_rank(values, 50) == timedelta(seconds=5)  # ceil(5.0) = 5th
    assert nearest_rank(values, 90) == timedelta(seconds=9)  # ceil(9.0) = 9th
    assert nearest_rank(values[:4], 50) == timedelta(seconds=2)  # even count: the lower middle
    assert nearest_rank(values[:4], 90) == timedelta(seconds=4)  # ceil(3.6) = 4th
    assert nearest_rank(values[:1], 90) == timedelta(seconds=1)
    eleven = [timedelta(seconds=s) for s in range(1, 12)]
    assert nearest_rank(eleven, 90) == timedelta(seconds=10)  # ceil(9.9) = 10th
    assert nearest_rank([], 50) is None


def test_no_conversations_gives_no_rates_instead_of_zero(seeded):
    report = report_for(seeded, start="2026-02-01", end="2026-02-07")
    assert report.created == 0 and report.ai_resolution_rate is None and report.handoff_rate is None
    assert report.first_response.median is None and report.csat_average is None
    assert report.csat_response_rate is None


def test_a_fixed_number_of_queries_whatever_the_data(seeded):
    first, _ = count_queries(lambda: report_for(seeded, **RANGE))
    inboxes = [InboxFactory(account=seeded.account) for _ in range(3)]
    for i in range(30):
        seed_conversation(
            inboxes[i % 3],
            local(4, i % 24),
            labels=[f"label-{i % 5}"],
            first_reply=timedelta(seconds=i + 1),
            resolved=timedelta(minutes=i + 1),
            resolved_by=AI,
            rating=1 + i % 5,
            csat_requested_at=local(9),
        )
    second, report = count_queries(lambda: report_for(seeded, **RANGE))
    assert report.created == 36
    assert first == second == 6


@pytest.fixture
def admin_client_for(client):
    def login(user):
        client.force_login(user)
        return client

    return login


def test_the_page_shows_the_figures(seeded, admin_client_for):
    client = admin_client_for(seeded.admin)
    response = client.get(f"/app/accounts/{seeded.account.id}/reports/", RANGE)
    assert response.status_code == 200
    html = response.content.decode()
    for expected in (
        '<td data-figure="created">6</td>',
        '<td data-figure="resolved_by_ai">2</td>',
        '<td data-figure="handed_to_people">3</td>',
        '<td data-figure="ai_resolution_rate">25.0 %</td>',
        '<td data-figure="handoff_rate">50.0 %</td>',
        '<td data-figure="first_response_median">1 min</td>',
        '<td data-figure="first_response_p90">10 min</td>',
        '<td data-figure="resolution_median">30 min</td>',
        '<td data-figure="resolution_p90">2 d</td>',
        '<td data-figure="csat_average">4.00</td>',
        '<td data-figure="csat_response_rate">66.7 %</td>',
        '<td data-figure="without_label">2</td>',
        "Web chat",
        f'href="/app/accounts/{seeded.account.id}/reports/export.csv?start=2026-03-02&amp;end=2026-03-08"',
    ):
        assert expected in html, expected
    assert "Globex" not in html and "globex-only" not in html
    # The page frame links to it for administrators.
    assert f'href="/app/accounts/{seeded.account.id}/reports/">Reports</a>' in html


def test_the_page_reads_a_fixed_number_of_queries(seeded, admin_client_for):
    client = admin_client_for(seeded.admin)
    url = f"/app/accounts/{seeded.account.id}/reports/"
    client.get(url, RANGE)  # the first page of a session also writes the session
    first, _ = count_queries(lambda: client.get(url, RANGE))
    for i in range(10):
        seed_conversation(seeded.email, local(5, i), labels=[f"x{i}"], first_reply=timedelta(seconds=5))
    second, response = count_queries(lambda: client.get(url, RANGE))
    assert response.status_code == 200 and first == second


def test_csv_export_has_the_same_figures(seeded, admin_client_for):
    client = admin_client_for(seeded.admin)
    response = client.get(f"/app/accounts/{seeded.account.id}/reports/export.csv", RANGE)
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert 'filename="report-2026-03-02-to-2026-03-08.csv"' in response["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == ["figure", "group", "value"]
    cells = {(figure, group): value for figure, group, value in rows[1:]}
    assert cells[("range_start", "")] == "2026-03-02" and cells[("time_zone", "")] == "Asia/Tokyo"
    assert cells[("conversations_created", "")] == "6"
    assert cells[("conversations_handed_to_people", "")] == "3"
    assert cells[("conversations_by_inbox", "Web chat")] == "4"
    assert cells[("resolved_by_inbox", "E-mail")] == "2"
    assert cells[("conversations_by_agent", "Unassigned")] == "2"
    assert cells[("handed_to_people_by_agent", "ben")] == "2"
    assert cells[("conversations_by_label", "refund")] == "3"
    assert cells[("ai_resolution_rate", "")] == "0.25" and cells[("handoff_rate", "")] == "0.5"
    assert cells[("first_response_median_seconds", "")] == "60"
    assert cells[("first_response_p90_seconds", "")] == "600"
    assert cells[("resolution_median_seconds", "")] == "1800"
    assert cells[("resolution_p90_seconds", "")] == "172800"
    assert cells[("csat_average", "")] == "4.0" and cells[("csat_surveys_requested", "")] == "3"
    assert cells[("csat_rating_count", "5")] == "1" and cells[("csat_rating_count", "1")] == "0"
    assert not any("Globex" in group or "globex" in group for _, group in cells)


def test_csv_cells_typed_by_people_never_run_as_formulas(seeded, admin_client_for):
    seeded.email.name = '=HYPERLINK("http://evil.example","x")'
    seeded.email.save()
    client = admin_client_for(seeded.admin)
    rows = list(
        csv.reader(
            io.StringIO(
                client.get(f"/app/accounts/{seeded.account.id}/reports/export.csv", RANGE).content.decode()
            )
        )
    )
    groups = {group for _, group, _ in rows}
    assert "'" + seeded.email.name in groups and seeded.email.name not in groups


def test_the_rest_endpoint_returns_the_figures(seeded):
    api = APIClient()
    api.force_authenticate(seeded.admin)
    body = api.get(f"/api/v1/accounts/{seeded.account.id}/reports/", RANGE).json()
    assert body["range"] == {"start": "2026-03-02", "end": "2026-03-08", "time_zone": "Asia/Tokyo"}
    assert body["conversations"]["created"] == 6 and body["conversations"]["resolved_by_people"] == 1
    assert body["rates"] == {"ai_resolution": 0.25, "handoff": 0.5}
    assert body["first_response_seconds"] == {"count": 5, "median": 60, "p90": 600}
    assert body["resolution_seconds"] == {"count": 4, "median": 1800, "p90": 172800}
    assert body["csat"]["distribution"] == {"1": 0, "2": 0, "3": 1, "4": 0, "5": 1}
    assert body["csat"]["average"] == 4.0 and body["csat"]["responses"] == 2
    assert [g["name"] for g in body["by_label"]] == ["refund", "vip"]


def test_agents_and_other_accounts_cannot_read_the_reports(seeded, client):
    account = seeded.account.id
    urls = [f"/app/accounts/{account}/reports/", f"/app/accounts/{account}/reports/export.csv"]
    client.force_login(seeded.agent)
    assert [client.get(url).status_code for url in urls] == [403, 403]
    page = client.get(f"/app/accounts/{account}/lists/mine/")
    assert f"/app/accounts/{account}/reports/" not in page.content.decode()
    client.force_login(seeded.outsider)
    assert [client.get(url).status_code for url in urls] == [404, 404]
    api = APIClient()
    api.force_authenticate(seeded.agent)
    assert api.get(f"/api/v1/accounts/{account}/reports/").status_code == 403
    api.force_authenticate(seeded.outsider)
    assert api.get(f"/api/v1/accounts/{account}/reports/").status_code == 404


def test_another_accounts_report_counts_only_its_own(seeded):
    theirs = account_report(account=seeded.other, period=report_range(account=seeded.other, **RANGE))
    # Three conversations on the 2nd, 3rd and 4th, all resolved by the AI alone, each rated 1.
    assert theirs.created == 3 and theirs.ai_resolution_rate == 1.0
    assert {g.name for g in theirs.by_label} == {"refund", "globex-only"}
    assert theirs.csat_distribution[1] == 3 and theirs.csat_count == 3
