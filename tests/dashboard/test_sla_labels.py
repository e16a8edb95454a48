"""SLA due times in the dashboard: the list shows each conversation's earliest open target ("due in" / "missed
... ago") with a bounded number of queries, and the conversation page shows it beside its status."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from helpdesk.models import Conversation, SlaPolicy
from tests.factories import ConversationFactory

from .conftest import count_queries
from .test_lists import MAX_LIST_QUERIES, url

pytestmark = pytest.mark.django_db


def handed(team, minutes_ago: int) -> Conversation:
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    Conversation.objects.filter(pk=conversation.pk).update(
        escalated_at=timezone.now() - dt.timedelta(minutes=minutes_ago), waiting_since=timezone.now()
    )
    return conversation


@pytest.fixture
def policy(team) -> SlaPolicy:
    policy = SlaPolicy.objects.create(
        account=team.account, name="Standard", first_response_minutes=30, business_hours_only=False
    )
    team.inbox.sla_policy = policy
    team.inbox.save(update_fields=["sla_policy"])
    return policy


def test_the_list_shows_due_and_missed_first_responses(agent_client, team, policy):
    late, fresh = handed(team, minutes_ago=45), handed(team, minutes_ago=5)
    html = agent_client.get(url(team, "needs-people")).content.decode()
    row = {c.pk: html.split(f'data-conversation="{c.pk}"')[1].split("</tr>")[0] for c in (late, fresh)}
    assert "First response missed 15" in row[late.pk] and "breached" in row[late.pk]
    assert "First response due in 2" in row[fresh.pk]  # 25 minutes, however the clock rounds


def test_sla_labels_keep_the_list_queries_bounded(agent_client, team, policy):
    handed(team, 10)
    agent_client.get(url(team, "needs-people"))
    small, _ = count_queries(lambda: agent_client.get(url(team, "needs-people")))
    for minutes in range(20):
        handed(team, minutes)
    large, response = count_queries(lambda: agent_client.get(url(team, "needs-people")))
    assert response.status_code == 200
    assert small == large <= MAX_LIST_QUERIES + 1  # +1: the SLA facts of the page


def test_the_conversation_page_shows_the_target(agent_client, team, policy):
    conversation = handed(team, minutes_ago=45)
    html = agent_client.get(
        f"/app/accounts/{team.account.id}/conversations/{conversation.pk}/"
    ).content.decode()
    assert "First response missed" in html


def test_reports_show_breach_rates_per_policy_on_the_page_and_in_the_api(admin_client, team, policy):
    from rest_framework.test import APIClient

    from helpdesk.services.sla import sla_breaches_mark

    handed(team, minutes_ago=45)
    handed(team, minutes_ago=5)
    assert sla_breaches_mark() == 1
    html = admin_client.get(f"/app/accounts/{team.account.id}/reports/").content.decode()
    assert "SLA breaches" in html and '<td data-figure="sla_breach_rate">50.0 %</td>' in html
    api = APIClient()
    api.force_authenticate(team.admin)
    figures = api.get(f"/api/v1/accounts/{team.account.id}/reports/").json()
    assert figures["sla_breach_rates"] == [
        {"policy": "Standard", "conversations": 2, "breached": 1, "rate": 0.5}
    ]
