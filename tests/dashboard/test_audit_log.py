"""The audit log: changes made in the Django admin, on dashboard pages and over the API are recorded with the
person, the place and the before/after of each field; secrets only as "changed"; each account sees its own."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from captain.assistants.models import ModelEndpoint
from helpdesk.models import AuditEntry, Membership, Team
from helpdesk.services.audit import SECRET_MARK
from helpdesk.tasks import audit_retention_sweep
from tests.factories import AssistantFactory, UserFactory
from tests.helpdesk.test_admin import admin_form_data

NEW_SECRET = "s3cr3t-NEW-value-never-logged"


def staff_admin(team):
    user = UserFactory(username="carol", is_staff=True)
    user.save()  # the factory skips the post-generation save: the session's password hash would be stale
    Membership.objects.create(account=team.account, user=user, role=Membership.Role.ADMIN)
    return user


def everything_recorded() -> str:
    return json.dumps(list(AuditEntry.objects.values()), default=str)


def test_an_inbox_changed_in_the_django_admin_names_who_and_the_fields_but_not_the_secret(team, admin_client):
    staff = staff_admin(team)
    client = Client()
    client.force_login(staff)
    url = f"/admin/helpdesk/inbox/{team.inbox.pk}/change/"
    data = admin_form_data(client.get(url)) | {"name": "Support chat", "new_secret": NEW_SECRET}

    assert client.post(url, data).status_code == 302

    entry = AuditEntry.objects.get(model="helpdesk.inbox", action="updated")
    assert (entry.account_id, entry.actor_id, entry.actor_name) == (team.account.pk, staff.pk, "carol")
    assert entry.source == AuditEntry.Source.ADMIN
    assert entry.changes["name"] == ["Web chat", "Support chat"]
    assert entry.changes["secret"] == [SECRET_MARK, SECRET_MARK]
    assert NEW_SECRET not in everything_recorded()
    assert "test-secret" not in everything_recorded()  # the old value either
    page = admin_client.get(f"/app/accounts/{team.account.pk}/audit/").content.decode()
    assert "Support chat" in page and "carol" in page
    assert NEW_SECRET not in page


def test_a_captain_endpoints_key_is_recorded_as_changed_only(team):
    endpoint = ModelEndpoint(account=team.account, name="ours", base_url="https://llm.example.com/v1")
    endpoint.api_key_encrypted = "gAAAA-ciphertext-of-the-key"
    endpoint.save()

    entry = AuditEntry.objects.get(model="captain.modelendpoint")
    assert entry.action == AuditEntry.Action.CREATED and entry.source == AuditEntry.Source.SYSTEM
    assert entry.changes["base_url"] == [None, "https://llm.example.com/v1"]
    assert entry.changes["api_key_encrypted"] == [SECRET_MARK, SECRET_MARK]
    assert "ciphertext" not in everything_recorded()


def test_a_scenario_belongs_to_its_assistants_account_and_deletion_is_recorded(team):
    assistant = AssistantFactory(account=team.account)
    scenario = assistant.scenarios.create(
        key="refunds", title="Refunds", description="Money back", instruction="Kind"
    )
    scenario.delete()

    actions = list(AuditEntry.objects.filter(model="captain.scenario").values_list("action", "account_id"))
    assert actions == [("created", team.account.pk), ("deleted", team.account.pk)]


def test_a_save_without_a_change_records_nothing(team):
    team.inbox.save()
    assert not AuditEntry.objects.filter(model="helpdesk.inbox", action="updated").exists()


def test_a_dashboard_change_is_recorded_as_from_the_dashboard(team, client):
    client.force_login(team.agent)
    membership = Membership.objects.get(account=team.account, user=team.agent)
    assert membership.email_notifications  # on by default: the post below turns it off
    response = client.post(f"/app/accounts/{team.account.pk}/notifications/email/", {})

    assert response.status_code in (200, 302)
    entry = AuditEntry.objects.get(model="helpdesk.membership", action="updated")
    assert (entry.source, entry.actor_id) == (AuditEntry.Source.DASHBOARD, team.agent.pk)
    assert entry.changes == {"email_notifications": [True, False]}


def test_an_api_change_is_recorded_as_from_the_api_and_listed_by_the_api(team, other_team):
    api = APIClient()
    api.force_authenticate(team.admin)
    created = api.post(f"/api/v1/accounts/{team.account.pk}/teams/", {"name": "Billing"}, format="json")
    assert created.status_code == 201

    entry = AuditEntry.objects.get(model="helpdesk.team")
    assert (entry.source, entry.actor_id, entry.changes["name"]) == ("api", team.admin.pk, [None, "Billing"])
    listed = api.get(f"/api/v1/accounts/{team.account.pk}/audit-log/?model=helpdesk.team").json()
    assert [row["id"] for row in listed["results"]] == [entry.pk]
    assert listed["results"][0]["actor_name"] == "alice"


def test_another_accounts_changes_are_not_shown(team, other_team, admin_client):
    Team.objects.create(account=other_team.account, name="Their secret project")
    Team.objects.create(account=team.account, name="Our returns desk")

    page = admin_client.get(f"/app/accounts/{team.account.pk}/audit/").content.decode()
    assert "Our returns desk" in page and "Their secret project" not in page
    api = APIClient()
    api.force_authenticate(team.admin)
    rows = api.get(f"/api/v1/accounts/{team.account.pk}/audit-log/").json()["results"]
    assert rows and all("Their secret project" not in json.dumps(row) for row in rows)
    # Another account's log: 404 for the page and the API alike (its existence is not confirmed).
    assert admin_client.get(f"/app/accounts/{other_team.account.pk}/audit/").status_code == 404
    assert api.get(f"/api/v1/accounts/{other_team.account.pk}/audit-log/").status_code == 404


def test_agents_may_not_read_the_log(team, client):
    client.force_login(team.agent)
    assert client.get(f"/app/accounts/{team.account.pk}/audit/").status_code == 403
    api = APIClient()
    api.force_authenticate(team.agent)
    assert api.get(f"/api/v1/accounts/{team.account.pk}/audit-log/").status_code == 403


def test_the_page_filters_by_model_person_and_day(team, admin_client):
    Team.objects.create(account=team.account, name="Returns")
    old = AuditEntry.objects.create(
        account=team.account, action="updated", model="helpdesk.inbox", object_id="1", object_repr="Long ago"
    )
    AuditEntry.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=10))
    url = f"/app/accounts/{team.account.pk}/audit/"

    by_model = admin_client.get(url, {"model": "helpdesk.team"}).content.decode()
    assert "Returns" in by_model and "Long ago" not in by_model
    today = timezone.localdate().isoformat()
    by_day = admin_client.get(url, {"since": today}).content.decode()
    assert "Returns" in by_day and "Long ago" not in by_day
    AuditEntry.objects.create(
        account=team.account,
        actor=team.admin,
        action="updated",
        model="helpdesk.inbox",
        object_id="1",
        object_repr="Alice's change",
    )
    by_person = admin_client.get(url, {"actor": str(team.admin.pk)}).content.decode()
    assert (
        "Alice&#x27;s change" in by_person and "Returns" not in by_person
    )  # made outside a request: nobody's
    nobody = admin_client.get(url, {"actor": "999999"}).content.decode()
    assert "Alice&#x27;s change" not in nobody and "Returns" not in nobody  # an unknown person: no entries


def test_the_retention_sweep_deletes_only_entries_older_than_the_setting(team, settings):
    settings.HELPDESK = {**settings.HELPDESK, "AUDIT_RETENTION_DAYS": 30}
    Team.objects.create(account=team.account, name="Fresh")
    old = AuditEntry.objects.create(
        account=team.account, action="updated", model="helpdesk.inbox", object_id="1"
    )
    AuditEntry.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=31))

    assert audit_retention_sweep() == 1
    assert not AuditEntry.objects.filter(pk=old.pk).exists()
    assert AuditEntry.objects.filter(object_repr="Fresh").exists()
    settings.HELPDESK = {**settings.HELPDESK, "AUDIT_RETENTION_DAYS": 0}
    AuditEntry.objects.update(created_at=timezone.now() - timedelta(days=3650))
    assert audit_retention_sweep() == 0


@pytest.mark.django_db
def test_deleting_an_account_deletes_its_log_without_writing_to_it(team):
    Team.objects.create(account=team.account, name="Returns")
    team.account.delete()
    assert not AuditEntry.objects.exists()


def test_team_members_added_over_the_api_are_recorded(team):
    api = APIClient()
    api.force_authenticate(team.admin)
    body = {"name": "Billing", "members": [team.agent.pk]}
    assert api.post(f"/api/v1/accounts/{team.account.pk}/teams/", body, format="json").status_code == 201

    entry = AuditEntry.objects.get(model="helpdesk.teammember")
    assert (entry.action, entry.source, entry.actor_id) == ("created", "api", team.admin.pk)
    assert entry.changes["user_id"] == [None, team.agent.pk]


def test_an_assistant_changed_in_the_django_admin_is_recorded(team):
    staff = staff_admin(team)
    client = Client()
    client.force_login(staff)
    assistant = AssistantFactory(account=team.account, product_name="Acme Shop")
    url = f"/admin/captain/assistant/{assistant.pk}/change/"

    response = client.post(url, admin_form_data(client.get(url)) | {"product_name": "Acme Store"})

    assert response.status_code == 302
    entry = AuditEntry.objects.get(model="captain.assistant", action="updated")
    assert (entry.source, entry.actor_id, entry.account_id) == ("admin", staff.pk, team.account.pk)
    assert entry.changes["product_name"] == ["Acme Shop", "Acme Store"]


def test_the_first_and_last_days_there_are_are_accepted_as_filters(team, admin_client):
    Team.objects.create(account=team.account, name="Returns")
    api = APIClient()
    api.force_authenticate(team.admin)
    url = f"/api/v1/accounts/{team.account.pk}/audit-log/"

    answer = api.get(url, {"since": "0001-01-01", "until": "9999-12-31"})

    assert answer.status_code == 200 and answer.json()["count"] >= 1
    page = admin_client.get(f"/app/accounts/{team.account.pk}/audit/", {"until": "9999-12-31"})
    assert page.status_code == 200 and "Returns" in page.content.decode()


def test_only_written_fields_are_compared(team):
    inbox = type(team.inbox).objects.only("id", "account_id", "name").get(pk=team.inbox.pk)
    inbox.name = "Renamed"
    inbox.save(update_fields=["name"])  # the deferred fields are neither read nor reported as emptied
    inbox.greeting_message = "Not saved"
    inbox.save(update_fields=["name"])  # nothing written changed: nothing recorded

    (entry,) = AuditEntry.objects.filter(model="helpdesk.inbox", action="updated")
    assert entry.changes == {"name": ["Web chat", "Renamed"]}


def test_a_canned_response_added_on_the_dashboard_is_recorded(team, client):
    client.force_login(team.agent)
    url = f"/app/accounts/{team.account.pk}/canned-responses/"
    client.post(url, {"short_code": "late", "content": "Sorry for the wait."})

    entry = AuditEntry.objects.get(model="helpdesk.cannedresponse")
    assert (entry.action, entry.source, entry.actor_id) == ("created", "dashboard", team.agent.pk)
    assert entry.changes["content"] == [None, "Sorry for the wait."]
