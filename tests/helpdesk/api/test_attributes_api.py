"""Custom attributes over the REST API: definitions (members read, administrators write) and the values of
contacts and conversations (merge, null removes, a bad value stores nothing), scoped to the caller's account."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from helpdesk.models import Contact, Conversation, CustomAttributeDefinition, Membership
from helpdesk.services.attributes import attribute_definition_create
from tests.factories import ConversationFactory, MembershipFactory

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


@pytest.fixture
def conversation(admin):
    conversation = ConversationFactory(contact_inbox__inbox__account=admin.account)
    assert conversation.account_id == admin.account_id
    return conversation


@pytest.fixture
def definitions(admin):
    account_id = admin.account_id
    return [
        attribute_definition_create(
            account_id=account_id,
            applies_to="contact",
            key="plan",
            label="Plan",
            kind="list",
            choices=["Free", "Pro"],
        ),
        attribute_definition_create(
            account_id=account_id, applies_to="contact", key="orders", label="Orders", kind="number"
        ),
        attribute_definition_create(
            account_id=account_id, applies_to="conversation", key="order_number", label="Order number"
        ),
        attribute_definition_create(
            account_id=account_id, applies_to="conversation", key="due", label="Due", kind="date"
        ),
    ]


def defs_url(account_id, suffix=""):
    return f"/api/v1/accounts/{account_id}/attribute-definitions/{suffix}"


def contact_url(account_id, contact_id):
    return f"/api/v1/accounts/{account_id}/contacts/{contact_id}/custom-attributes/"


def conversation_url(account_id, conversation_id):
    return f"/api/v1/accounts/{account_id}/conversations/{conversation_id}/custom-attributes/"


# ---- definitions -------------------------------------------------------------------------------------------


def test_admin_creates_a_list_definition(admin):
    response = client_of(admin).post(
        defs_url(admin.account_id),
        {"applies_to": "contact", "key": "plan", "label": "Plan", "kind": "list", "choices": ["Free", "Pro"]},
        format="json",
    )

    assert response.status_code == 201, response.data
    assert response.data["key"] == "plan"
    assert response.data["choices"] == ["Free", "Pro"]
    assert CustomAttributeDefinition.objects.get(account=admin.account).kind == "list"


def test_invalid_definition_is_400_with_the_field(admin):
    api = client_of(admin)

    no_choices = api.post(
        defs_url(admin.account_id), {"applies_to": "contact", "key": "plan", "label": "Plan", "kind": "list"}
    )
    bad_key = api.post(defs_url(admin.account_id), {"applies_to": "contact", "key": "Plan!", "label": "Plan"})

    assert no_choices.status_code == 400
    assert "choices" in no_choices.data
    assert bad_key.status_code == 400
    assert "key" in bad_key.data
    assert not CustomAttributeDefinition.objects.exists()


def test_agent_reads_definitions_but_cannot_write_them(agent, definitions):
    api = client_of(agent)
    plan = definitions[0]

    listed = api.get(defs_url(agent.account_id), {"applies_to": "contact"})
    created = api.post(defs_url(agent.account_id), {"applies_to": "contact", "key": "x", "label": "X"})
    changed = api.patch(defs_url(agent.account_id, f"{plan.id}/"), {"label": "Hacked"}, format="json")
    deleted = api.delete(defs_url(agent.account_id, f"{plan.id}/"))

    assert listed.status_code == 200
    assert [d["key"] for d in listed.data] == ["orders", "plan"]
    assert (created.status_code, changed.status_code, deleted.status_code) == (403, 403, 403)
    plan.refresh_from_db()
    assert plan.label == "Plan"
    assert CustomAttributeDefinition.objects.count() == len(definitions)


def test_admin_changes_and_deletes_a_definition_but_not_its_key(admin, definitions):
    api = client_of(admin)
    plan = definitions[0]

    changed = api.patch(
        defs_url(admin.account_id, f"{plan.id}/"),
        {"label": "Tier", "choices": ["Free", "Pro", "Team"]},
        format="json",
    )
    rekeyed = api.patch(defs_url(admin.account_id, f"{plan.id}/"), {"key": "tier"}, format="json")
    deleted = api.delete(defs_url(admin.account_id, f"{plan.id}/"))

    assert changed.status_code == 200, changed.data
    assert changed.data["choices"] == ["Free", "Pro", "Team"]
    assert rekeyed.status_code == 400
    assert "key" in rekeyed.data
    assert deleted.status_code == 204
    assert not CustomAttributeDefinition.objects.filter(pk=plan.pk).exists()


# ---- values ------------------------------------------------------------------------------------------------


def test_agent_patches_contact_attributes_merging_and_removing(agent, conversation, definitions):
    api = client_of(agent)
    url = contact_url(agent.account_id, conversation.contact_id)

    first = api.patch(url, {"custom_attributes": {"plan": "pro", "orders": 2}}, format="json")
    second = api.patch(url, {"custom_attributes": {"plan": None}}, format="json")
    read = api.get(url)

    assert first.status_code == 200, first.data
    assert first.data == {"custom_attributes": {"plan": "Pro", "orders": 2}}
    assert second.data == {"custom_attributes": {"orders": 2}}
    assert read.data == {"custom_attributes": {"orders": 2}}
    assert Contact.objects.get(pk=conversation.contact_id).custom_attributes == {"orders": 2}


def test_bad_value_is_400_naming_key_and_kind_and_stores_nothing(agent, conversation, definitions):
    api = client_of(agent)
    url = conversation_url(agent.account_id, conversation.id)
    api.patch(url, {"custom_attributes": {"order_number": "A-1"}}, format="json")

    response = api.patch(
        url, {"custom_attributes": {"order_number": "A-2", "due": "tomorrow", "color": "red"}}, format="json"
    )

    assert response.status_code == 400
    errors = response.data["custom_attributes"]
    assert set(errors) == {"due", "color"}
    assert "'due' expects a date as YYYY-MM-DD" in str(errors["due"][0])
    assert "'color' is not a conversation attribute" in str(errors["color"][0])
    assert Conversation.objects.get(pk=conversation.pk).custom_attributes == {"order_number": "A-1"}


def test_body_must_be_an_object_of_values(agent, conversation, definitions):
    response = client_of(agent).patch(
        conversation_url(agent.account_id, conversation.id), {"custom_attributes": ["due"]}, format="json"
    )

    assert response.status_code == 400
    assert Conversation.objects.get(pk=conversation.pk).custom_attributes == {}


# ---- tenant isolation --------------------------------------------------------------------------------------


@pytest.fixture
def other(definitions):
    """Account B: its admin, a conversation with attribute values, a definition."""
    b_admin = MembershipFactory(role=Membership.Role.ADMIN)
    b_conversation = ConversationFactory(contact_inbox__inbox__account=b_admin.account)
    b_def = attribute_definition_create(
        account_id=b_admin.account_id, applies_to="contact", key="plan", label="Plan"
    )
    Contact.objects.filter(pk=b_conversation.contact_id).update(custom_attributes={"plan": "secret"})
    Conversation.objects.filter(pk=b_conversation.pk).update(custom_attributes={"note": "secret"})
    return b_admin, b_conversation, b_def


def test_other_account_objects_are_404_and_untouched(admin, other):
    _, b_conversation, b_def = other
    api = client_of(admin)
    a = admin.account_id
    b = b_conversation.account_id
    attempts = [
        api.get(contact_url(a, b_conversation.contact_id)),
        api.patch(
            contact_url(a, b_conversation.contact_id), {"custom_attributes": {"plan": None}}, format="json"
        ),
        api.get(conversation_url(a, b_conversation.id)),
        api.patch(
            conversation_url(a, b_conversation.id), {"custom_attributes": {"note": None}}, format="json"
        ),
        api.get(defs_url(a, f"{b_def.id}/")),
        api.patch(defs_url(a, f"{b_def.id}/"), {"label": "Mine"}, format="json"),
        api.delete(defs_url(a, f"{b_def.id}/")),
        # B's own URLs: A's admin is no member there.
        api.get(defs_url(b)),
        api.post(defs_url(b), {"applies_to": "contact", "key": "x", "label": "X"}, format="json"),
        api.get(contact_url(b, b_conversation.contact_id)),
        api.patch(
            conversation_url(b, b_conversation.id), {"custom_attributes": {"note": None}}, format="json"
        ),
    ]

    assert [r.status_code for r in attempts] == [404] * len(attempts)
    assert Contact.objects.get(pk=b_conversation.contact_id).custom_attributes == {"plan": "secret"}
    assert Conversation.objects.get(pk=b_conversation.pk).custom_attributes == {"note": "secret"}
    b_def.refresh_from_db()
    assert b_def.label == "Plan"
    assert not CustomAttributeDefinition.objects.filter(account_id=b, key="x").exists()


def test_definition_list_shows_only_the_callers_account(admin, definitions, other):
    keys = [d["key"] for d in client_of(admin).get(defs_url(admin.account_id)).data]

    assert sorted(keys) == ["due", "order_number", "orders", "plan"]


# ---- admin -------------------------------------------------------------------------------------------------


@pytest.fixture
def staff_client(client, admin):
    admin.user.is_staff = True
    admin.user.save(update_fields=["is_staff"])
    client.force_login(admin.user)
    return client


def test_admin_defines_attributes_with_the_apis_rules(staff_client, admin):
    url = "/admin/helpdesk/customattributedefinition/add/"
    form = {
        "account": admin.account_id,
        "applies_to": "contact",
        "key": "plan",
        "label": "Plan",
        "description": "",
    }

    refused = staff_client.post(url, {**form, "kind": "list", "choices": "[]"})
    created = staff_client.post(url, {**form, "kind": "list", "choices": '["Free", "Pro"]'})

    assert refused.status_code == 200
    assert "needs its allowed values" in str(refused.context["adminform"].form.errors["choices"])
    assert created.status_code == 302
    assert CustomAttributeDefinition.objects.get(account=admin.account).choices == ["Free", "Pro"]


def test_admin_edits_the_account_time_zone(staff_client, admin):
    url = f"/admin/helpdesk/account/{admin.account_id}/change/"
    inline = {"memberships-TOTAL_FORMS": "0", "memberships-INITIAL_FORMS": "0"}

    refused = staff_client.post(url, {"name": "Acme", "time_zone": "Mars/Olympus", **inline})
    saved = staff_client.post(url, {"name": "Acme", "time_zone": "Asia/Shanghai", **inline})

    assert refused.status_code == 200
    assert "time_zone" in refused.context["adminform"].form.errors
    assert saved.status_code == 302
    admin.account.refresh_from_db()
    assert admin.account.time_zone == "Asia/Shanghai"
