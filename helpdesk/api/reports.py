"""The report's figures over the REST API: `GET accounts/<id>/reports/?start=YYYY-MM-DD&end=YYYY-MM-DD`.

The same figures as the dashboard's report page and its CSV export (helpdesk.selectors.reports defines them):
conversations created in the range (account time zone, both days included; by default the last 7 days), by
inbox, label and assignee, AI vs people, first response and resolution times (median and p90, in seconds),
AI resolution and handoff rates (fractions), CSAT. Administrators of the account only (agents 403, anyone
else 404); a bad date answers 400 with what to type instead.
"""

from __future__ import annotations

from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

import helpdesk.ids  # noqa: F401  (registers the <id:...> path converter used below)
from helpdesk.selectors.reports import (
    DEFAULT_DAYS,
    MAX_DAYS,
    ReportRangeError,
    account_report,
    report_figures,
    report_range,
)
from helpdesk.selectors.sla import sla_breach_rates

from .auth import AccountAdminApi


class AccountReportApi(AccountAdminApi):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "start",
                OpenApiTypes.DATE,
                description=f"First day (default: {DEFAULT_DAYS - 1} days before end); not after end, and at "
                f"most {MAX_DAYS} days from start to end, both included.",
            ),
            OpenApiParameter(
                "end",
                OpenApiTypes.DATE,
                description=f"Last day, included (default: today); a report covers at most {MAX_DAYS} days.",
            ),
        ],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request, account_id: int) -> Response:
        try:
            period = report_range(
                account=self.membership.account,
                start=request.query_params.get("start"),
                end=request.query_params.get("end"),
            )
        except ReportRangeError as exc:
            raise serializers.ValidationError({"detail": str(exc)}) from exc
        figures = report_figures(account_report(account=self.membership.account, period=period))
        # Per SLA policy: conversations created in the range on its inboxes, and how many missed a target.
        figures["sla_breach_rates"] = sla_breach_rates(
            account_id=self.membership.account_id, since=period.since, until=period.until
        )
        return Response(figures)


urlpatterns = [
    path("accounts/<id:account_id>/reports/", AccountReportApi.as_view(), name="account-report"),
]
