"""Macros and automation rules over the REST API: a person lists the macros they may run, makes personal ones
(administrators make the account's), runs one on conversations with the answer saying what was done; bad
actions, too many conversations and another's macro are refused clearly; rules are for administrators, and a
conversation's rule runs are listed."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from helpdesk.models import AutomationRun, Conversation, Macro, Membership
from helpdesk.models.automation import Visibility
from tests.factories import ConversationFactory, InboxFactory, MembershipFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin():
    return MembershipFactory(role=Membership.Role.ADMIN)


@pytest.fixture
def agent(admin):
    return MembershipFactory(account=admin.account, role=Membership.Role.AGENT)


def client_of(membership) -> APIClient:
    api = APIClient()
    api.force_authenticate(membership.user)
    return api


def base(membership) -> str:
    return f"/api/v1/accounts/{membership.account_id}/"


def test_an_agent_makes_a_personal_macro_and_runs_it(agent, admin):
    api = client_of(agent)
    created = api.post(
        f"{base(agent)}macros/",
        {"name": "Done", "actions": [{"kind": "add_label", "value": "done"}, {"kind": "resolve"}]},
        format="json",
    )
    assert created.status_code == 201, created.data
    assert created.data["visibility"] == "personal" and created.data["owner"] == agent.user_id
    inbox = InboxFactory(account=agent.account)
    ids = [ConversationFactory(contact_inbox__inbox=inbox, status="open").pk for _ in range(2)]
    ran = api.post(
        f"{base(agent)}macros/{created.data['id']}/run/", {"conversation_ids": [*ids, 999999]}, format="json"
    )
    assert ran.status_code == 200
    assert ran.data == {"conversations": 2, "not_found": 1, "done": 4, "failed_count": 0, "failed": []}
    assert Conversation.objects.filter(pk__in=ids, status="resolved").count() == 2
    # Personal: the administrator neither lists nor runs it.
    other = client_of(admin)
    assert other.get(f"{base(admin)}macros/").data["results"] == []
    assert (
        other.post(
            f"{base(admin)}macros/{created.data['id']}/run/", {"conversation_ids": ids}, format="json"
        ).status_code
        == 404
    )


def test_only_administrators_make_macros_for_everyone(agent, admin):
    body = {"name": "Shared", "actions": [{"kind": "resolve"}], "personal": False}
    assert client_of(agent).post(f"{base(agent)}macros/", body, format="json").status_code == 403
    made = client_of(admin).post(f"{base(admin)}macros/", body, format="json")
    assert made.status_code == 201 and made.data["visibility"] == Visibility.ACCOUNT
    assert [m["name"] for m in client_of(agent).get(f"{base(agent)}macros/").data["results"]] == ["Shared"]


def test_bad_actions_and_too_many_conversations_are_refused(agent):
    api = client_of(agent)
    bad = api.post(f"{base(agent)}macros/", {"name": "Bad", "actions": [{"kind": "explode"}]}, format="json")
    assert bad.status_code == 400 and "actions" in bad.data
    assert not Macro.objects.exists()
    macro = Macro.objects.create(account=agent.account, name="Ok", actions=[{"kind": "resolve"}])
    many = api.post(
        f"{base(agent)}macros/{macro.pk}/run/", {"conversation_ids": list(range(1, 1002))}, format="json"
    )
    assert many.status_code == 400 and "conversation_ids" in many.data


def test_rules_are_for_administrators_and_runs_are_listed(agent, admin):
    rule = {
        "name": "Refunds",
        "event": "message_created",
        "conditions": {"text_contains": "refund"},
        "actions": [{"kind": "add_label", "value": "billing"}],
    }
    assert client_of(agent).post(f"{base(agent)}automation-rules/", rule, format="json").status_code == 403
    made = client_of(admin).post(f"{base(admin)}automation-rules/", rule, format="json")
    assert made.status_code == 201, made.data
    again = client_of(admin).post(
        f"{base(admin)}automation-rules/", {**rule, "conditions": {"mood": "bad"}}, format="json"
    )
    assert again.status_code == 400
    conversation = ConversationFactory(contact_inbox__inbox=InboxFactory(account=admin.account))
    AutomationRun.objects.create(
        account=admin.account,
        rule_id=made.data["id"],
        rule_name="Refunds",
        conversation=conversation,
        event="message_created",
        actions_done=["added label billing"],
    )
    runs = client_of(agent).get(f"{base(agent)}conversations/{conversation.pk}/automation-runs/")
    assert runs.status_code == 200 and runs.data["results"][0]["actions_done"] == ["added label billing"]


def test_an_administrator_changes_pauses_and_deletes_a_rule_and_it_is_in_the_audit_log(admin, agent):
    from helpdesk.models import AuditEntry, AutomationRule

    api = client_of(admin)
    rule = api.post(
        base(admin) + "automation-rules/",
        {
            "name": "Refunds",
            "event": "message_created",
            "conditions": {"text_contains": "refund"},
            "actions": [{"kind": "add_label", "value": "refund"}],
        },
        format="json",
    ).json()
    url = base(admin) + f"automation-rules/{rule['id']}/"

    unchanged = api.patch(url, {}, format="json")
    assert unchanged.status_code == 200
    assert unchanged.json()["updated_at"] == rule["updated_at"]
    paused = api.patch(url, {"active": False, "conditions": {"text_contains": "money back"}}, format="json")
    assert paused.status_code == 200
    assert paused.json()["active"] is False
    assert paused.json()["conditions"] == {"text_contains": "money back"}
    bad = api.patch(url, {"actions": [{"kind": "explode"}]}, format="json")
    assert bad.status_code == 400
    assert AutomationRule.objects.get(pk=rule["id"]).actions == [{"kind": "add_label", "value": "refund"}]

    assert client_of(agent).patch(url, {"active": True}, format="json").status_code == 403
    assert client_of(agent).delete(url).status_code == 403
    other = MembershipFactory(role=Membership.Role.ADMIN)
    assert (
        client_of(other)
        .get(f"/api/v1/accounts/{other.account_id}/automation-rules/{rule['id']}/")
        .status_code
        == 404
    )

    assert api.delete(url).status_code == 204
    assert api.get(url).status_code == 404
    logged = AuditEntry.objects.filter(model="helpdesk.automationrule", object_id=str(rule["id"]))
    assert sorted(logged.values_list("action", flat=True)) == ["created", "deleted", "updated"]
