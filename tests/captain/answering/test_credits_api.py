"""Credit usage: balance plus the last 30 days of the ledger, refunds counted negative."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from captain.answering.models import CreditLedgerEntry
from helpdesk.models import Membership
from tests.factories import (
    AssistantFactory,
    ConversationFactory,
    CreditBalanceFactory,
    CreditLedgerEntryFactory,
    MembershipFactory,
    MessageFactory,
)

pytestmark = pytest.mark.django_db


def test_usage_sums_ledger_by_day_assistant_and_agent():
    member = MembershipFactory(role=Membership.Role.ADMIN)
    account = member.account
    CreditBalanceFactory(account=account, limit=100, used=3)
    conversation = ConversationFactory(contact_inbox__inbox__account=account)
    triage = AssistantFactory(account=account, name="Triage")
    now = timezone.now()

    def charge(*, kind="ai_reply", amount=1, agent_key="assistant", days_ago=0, message=None):
        entry = CreditLedgerEntryFactory(
            message=message or MessageFactory(conversation=conversation),
            kind=kind,
            amount=amount,
            assistant=triage,
            agent_key=agent_key,
        )
        CreditLedgerEntry.objects.filter(pk=entry.pk).update(created_at=now - dt.timedelta(days=days_ago))
        return entry

    refunded = charge(agent_key="refunds", days_ago=1)
    charge(kind="refund", amount=-1, agent_key="refunds", days_ago=1, message=refunded.message)
    charge()
    charge()
    charge(days_ago=40)  # outside the window
    CreditLedgerEntryFactory(amount=5)  # another account

    api = APIClient()
    api.force_authenticate(member.user)
    response = api.get(f"/api/v1/captain/accounts/{account.id}/credits/")

    assert response.status_code == 200
    data = response.json()
    assert (data["limit"], data["used"], data["remaining"]) == (100, 3, 97)
    assert data["by_day"] == [
        {"date": (now - dt.timedelta(days=1)).date().isoformat(), "credits": 0},
        {"date": now.date().isoformat(), "credits": 2},
    ]
    assert data["by_assistant"] == [{"assistant_id": triage.id, "assistant_name": "Triage", "credits": 2}]
    assert data["by_agent_key"] == [
        {"agent_key": "assistant", "credits": 2},
        {"agent_key": "refunds", "credits": 0},
    ]


def test_usage_of_a_new_account_uses_the_default_limit(settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "DEFAULT_CREDIT_LIMIT": 250}
    member = MembershipFactory(role=Membership.Role.ADMIN)
    api = APIClient()
    api.force_authenticate(member.user)

    data = api.get(f"/api/v1/captain/accounts/{member.account_id}/credits/").json()

    assert (data["limit"], data["used"], data["remaining"]) == (250, 0, 250)
    assert data["by_day"] == data["by_assistant"] == data["by_agent_key"] == []


def test_credits_are_for_administrators_like_the_usage_page(client):
    """One rule for billing data: the REST API and the dashboard's usage page both refuse agents."""
    agent = MembershipFactory(role=Membership.Role.AGENT)
    api = APIClient()
    api.force_authenticate(agent.user)
    client.force_login(agent.user)

    assert api.get(f"/api/v1/captain/accounts/{agent.account_id}/credits/").status_code == 403
    assert client.get(f"/app/accounts/{agent.account_id}/usage/").status_code in (403, 404)
