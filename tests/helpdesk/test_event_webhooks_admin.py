"""Event webhooks in the Django admin: an endpoint's secret is shown once, a private URL is refused, the delivery
log's replay action queues the event again, and another account's rows are out of reach."""

from __future__ import annotations

import pytest
from django.test import Client

from helpdesk.models import AuditEntry, Membership, WebhookDelivery, WebhookEndpoint
from helpdesk.services.event_webhook_endpoints import webhook_endpoint_create
from helpdesk.services.event_webhooks import event_emit
from tests.factories import AccountFactory, MembershipFactory
from tests.helpdesk.test_admin import staff_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def account():
    return AccountFactory(name="Alpha Co")


@pytest.fixture
def staff(account):
    user = staff_user()
    MembershipFactory(account=account, user=user, role=Membership.Role.ADMIN)
    client = Client()
    client.force_login(user)
    return client


def test_a_new_endpoint_shows_its_secret_once_and_the_audit_log_never(staff, account):
    response = staff.post(
        "/admin/helpdesk/webhookendpoint/add/",
        {
            "account": account.pk,
            "name": "CRM",
            "url": "http://127.0.0.1:9/hooks",
            "events": ["csat"],
            "enabled": "on",
        },
        follow=True,
    )

    endpoint = WebhookEndpoint.objects.get()
    secret = endpoint.secret()
    assert len(secret) == 64 and secret in response.content.decode()
    assert secret not in staff.get(f"/admin/helpdesk/webhookendpoint/{endpoint.pk}/change/").content.decode()
    assert secret not in str(list(AuditEntry.objects.values()))
    assert endpoint.secret_encrypted and secret not in endpoint.secret_encrypted


def test_a_private_url_is_refused_by_the_policy_in_production_settings(staff, account, settings):
    settings.HELPDESK = {**settings.HELPDESK, "OUTBOUND_ALLOWED_HOSTS": []}
    response = staff.post(
        "/admin/helpdesk/webhookendpoint/add/",
        {"account": account.pk, "name": "CRM", "url": "https://192.168.1.10/hooks", "events": ["csat"]},
    )
    assert response.status_code == 200 and "outbound policy" in response.content.decode()
    assert not WebhookEndpoint.objects.exists()


def test_the_replay_action_queues_the_event_again(staff, account):
    webhook_endpoint_create(
        account_id=account.pk, name="CRM", url="http://127.0.0.1:9/hooks", events=["csat"]
    )
    (row_id,) = event_emit(account_id=account.pk, event="csat", data={"rating": 5})

    response = staff.post(
        "/admin/helpdesk/webhookdelivery/",
        {"action": "replay", "_selected_action": [str(row_id)]},
        follow=True,
    )

    assert response.status_code == 200
    replay = WebhookDelivery.objects.exclude(pk=row_id).get()
    assert replay.replay_of_id == row_id and replay.payload == WebhookDelivery.objects.get(pk=row_id).payload


def test_another_accounts_endpoints_and_deliveries_are_not_listed(staff, account):
    other = AccountFactory(name="Bravo Co")
    webhook_endpoint_create(
        account_id=other.pk, name="Their CRM", url="http://127.0.0.1:9/x", events=["csat"]
    )
    event_emit(account_id=other.pk, event="csat", data={})

    assert "Their CRM" not in staff.get("/admin/helpdesk/webhookendpoint/").content.decode()
    assert "Their CRM" not in staff.get("/admin/helpdesk/webhookdelivery/").content.decode()
    endpoint = WebhookEndpoint.objects.get()
    assert staff.get(f"/admin/helpdesk/webhookendpoint/{endpoint.pk}/change/").status_code in (302, 403, 404)


def test_the_replay_button_on_a_delivery_page_sends_it_again_and_not_another_accounts(staff, account):
    webhook_endpoint_create(
        account_id=account.pk, name="CRM", url="http://127.0.0.1:9/hooks", events=["csat"]
    )
    (row_id,) = event_emit(account_id=account.pk, event="csat", data={"rating": 5})
    page = staff.get(f"/admin/helpdesk/webhookdelivery/{row_id}/change/").content.decode()
    assert f"/admin/helpdesk/webhookdelivery/{row_id}/replay/" in page

    assert staff.get(f"/admin/helpdesk/webhookdelivery/{row_id}/replay/").status_code == 405
    assert staff.post(f"/admin/helpdesk/webhookdelivery/{row_id}/replay/").status_code == 302
    assert WebhookDelivery.objects.filter(replay_of_id=row_id).count() == 1
    other = AccountFactory(name="Bravo Co")
    webhook_endpoint_create(account_id=other.pk, name="Theirs", url="http://127.0.0.1:9/x", events=["csat"])
    (their_id,) = event_emit(account_id=other.pk, event="csat", data={})
    assert staff.post(f"/admin/helpdesk/webhookdelivery/{their_id}/replay/").status_code == 404
    assert not WebhookDelivery.objects.filter(replay_of_id=their_id).exists()
