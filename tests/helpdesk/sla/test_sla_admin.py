"""SLA policies and business hours in the admin: an account's admin creates a policy, gives it to an inbox with
business hours; a policy of another account, or malformed hours, are refused on their fields."""

from __future__ import annotations

import pytest
from django.test import Client

from helpdesk.models import Inbox, Membership, SlaPolicy
from tests.factories import AccountFactory, InboxFactory, MembershipFactory, UserFactory
from tests.helpdesk.test_admin import admin_form_data

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client_and_account():
    account = AccountFactory()
    user = UserFactory(is_staff=True)
    MembershipFactory(account=account, user=user, role=Membership.Role.ADMIN)
    client = Client()
    client.force_login(user)
    return client, account


def test_an_admin_creates_a_policy_and_an_inbox_gets_it_with_business_hours(admin_client_and_account):
    client, account = admin_client_and_account
    response = client.post(
        "/admin/helpdesk/slapolicy/add/",
        {
            "account": account.pk,
            "name": "Standard",
            "first_response_minutes": "30",
            "business_hours_only": "on",
        },
    )
    assert response.status_code == 302, response.content[:2000]
    policy = SlaPolicy.objects.get(account=account, name="Standard")
    inbox = InboxFactory(account=account, channel_type=Inbox.ChannelType.TELEGRAM)
    url = f"/admin/helpdesk/inbox/{inbox.pk}/change/"
    data = admin_form_data(client.get(url))
    data.update(
        sla_policy=policy.pk,
        telegram_business_hours="mon-fri 09:00-17:00",
        telegram_time_zone="Europe/Berlin",
        telegram_away_message="We answer on weekdays.",
    )
    assert client.post(url, data).status_code == 302
    inbox.refresh_from_db()
    assert inbox.sla_policy == policy
    assert inbox.provider_config["business_hours"] == "mon-fri 09:00-17:00"
    assert inbox.provider_config["away_message"] == "We answer on weekdays."


def test_a_policy_without_targets_is_refused(admin_client_and_account):
    client, account = admin_client_and_account
    response = client.post("/admin/helpdesk/slapolicy/add/", {"account": account.pk, "name": "Empty"})
    assert response.status_code == 200
    assert "Set at least one target." in response.content.decode()
    assert not SlaPolicy.objects.exists()


def test_another_accounts_policy_and_bad_hours_are_refused_on_their_fields(admin_client_and_account):
    client, account = admin_client_and_account
    other = SlaPolicy.objects.create(account=AccountFactory(), name="Theirs", first_response_minutes=5)
    inbox = InboxFactory(account=account, channel_type=Inbox.ChannelType.TELEGRAM)
    url = f"/admin/helpdesk/inbox/{inbox.pk}/change/"
    data = admin_form_data(client.get(url))
    data.update(sla_policy=other.pk, telegram_business_hours="weekdays 9-5")
    response = client.post(url, data)
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert "sla_policy" in errors
    assert '"weekdays 9-5" is not like' in errors["telegram_business_hours"][0]
    inbox.refresh_from_db()
    assert inbox.sla_policy is None and "business_hours" not in inbox.provider_config


def test_sla_policies_over_the_api_for_administrators():
    from rest_framework.test import APIClient

    admin = MembershipFactory(role=Membership.Role.ADMIN)
    agent = MembershipFactory(account=admin.account, role=Membership.Role.AGENT)
    url = f"/api/v1/accounts/{admin.account_id}/sla-policies/"
    api = APIClient()
    api.force_authenticate(agent.user)
    assert api.get(url).status_code == 403
    api.force_authenticate(admin.user)
    made = api.post(url, {"name": "Gold", "first_response_minutes": 15}, format="json")
    assert made.status_code == 201 and made.data["first_response_minutes"] == 15
    assert api.post(url, {"name": "Empty"}, format="json").status_code == 400
    assert api.post(url, {"name": "Gold", "resolution_minutes": 60}, format="json").status_code == 400
    assert [p["name"] for p in api.get(url).data["results"]] == ["Gold"]
