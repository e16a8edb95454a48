"""Shortcuts API: CRUD under an assistant, the service's rules as 400s per field, tenant scoping."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from captain.actions.models import Shortcut
from helpdesk.models import Membership
from tests.factories import AssistantFactory, MembershipFactory, ScenarioFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin():
    return MembershipFactory(role=Membership.Role.ADMIN)


@pytest.fixture
def assistant(admin):
    return AssistantFactory(account=admin.account)


@pytest.fixture
def api(admin):
    client = APIClient()
    client.force_authenticate(admin.user)
    return client


def url(assistant, suffix=""):
    return f"/api/v1/captain/accounts/{assistant.account_id}/assistants/{assistant.id}/shortcuts/{suffix}"


def body(**overrides):
    return {
        "command": "track",
        "description": "Track an order",
        "parameters": [{"name": "order_id", "description": "Your order number", "required": True}],
        "action": "tool",
        "tool_name": "faq_lookup",
        "tool_arguments": {"query": "order {order_id}"},
        **overrides,
    }


def test_create_list_update_delete(api, assistant):
    created = api.post(url(assistant), body(), format="json")
    assert created.status_code == 201, created.data
    assert created.data["command"] == "track" and created.data["enabled"] is True

    listed = api.get(url(assistant))
    assert [s["command"] for s in listed.data["results"]] == ["track"]

    patched = api.patch(url(assistant, f"{created.data['id']}/"), {"enabled": False}, format="json")
    assert patched.status_code == 200 and patched.data["enabled"] is False
    assert patched.data["tool_arguments"] == {"query": "order {order_id}"}  # untouched by a partial write

    assert api.delete(url(assistant, f"{created.data['id']}/")).status_code == 204
    assert not Shortcut.objects.exists()


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"command": "Track-Order"}, "command"),
        ({"tool_name": "set_priority", "tool_arguments": {"priority": "high"}}, "tool_name"),
        ({"tool_arguments": {"query": "{order_id.__class__}"}}, "tool_arguments"),
        ({"tool_arguments": {}}, "tool_arguments"),
        ({"parameters": [{"name": "order id"}]}, "parameters"),
        ({"action": "message", "message_template": "Order {0}"}, "message_template"),
        ({"action": "message", "message_template": ""}, "message_template"),
    ],
)
def test_invalid_shortcuts_are_400_per_field_and_store_nothing(api, assistant, overrides, field):
    response = api.post(url(assistant), body(**overrides), format="json")
    assert response.status_code == 400
    assert field in response.data, response.data
    assert not Shortcut.objects.exists()


def test_a_tool_of_a_scenario_may_be_used(api, assistant):
    ScenarioFactory(assistant=assistant, tools=["set_priority"])
    response = api.post(
        url(assistant),
        body(
            command="urgent", parameters=[], tool_name="set_priority", tool_arguments={"priority": "urgent"}
        ),
        format="json",
    )
    assert response.status_code == 201, response.data


def test_a_duplicate_command_is_400(api, assistant):
    assert api.post(url(assistant), body(), format="json").status_code == 201
    response = api.post(url(assistant), body(), format="json")
    assert response.status_code == 400
    assert response.data["command"] == ["This assistant already has the shortcut /track."]


def test_an_invalid_update_leaves_the_row_unchanged(api, assistant):
    created = api.post(url(assistant), body(), format="json").data
    response = api.patch(
        url(assistant, f"{created['id']}/"), {"tool_arguments": {"query": "{x}"}}, format="json"
    )
    assert response.status_code == 400
    assert Shortcut.objects.get().tool_arguments == {"query": "order {order_id}"}


def test_another_accounts_assistant_is_404(api, assistant):
    other = AssistantFactory()
    assert api.get(url(other)).status_code in (403, 404)
    assert api.post(url(other), body(), format="json").status_code in (403, 404)
    assert not Shortcut.objects.exists()


def test_agents_may_read_but_not_write(assistant):
    agent = MembershipFactory(account=assistant.account, role=Membership.Role.AGENT)
    client = APIClient()
    client.force_authenticate(agent.user)
    assert client.get(url(assistant)).status_code == 200
    assert client.post(url(assistant), body(), format="json").status_code == 403
