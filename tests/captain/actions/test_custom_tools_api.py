"""Custom HTTP tools over the REST API: CRUD for administrators, a write-only secret, tenant isolation (another
account's tool is a 404 and cannot be named by a scenario), the test call, and bad input refused with nothing
stored."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from captain.actions.models import CustomTool
from captain.answering.models import SpanRecord
from captain.assistants.models import Scenario
from captain.crypto import secret_decrypt
from helpdesk.models import Membership
from tests.captain.actions.test_custom_http_tools import ShopServer
from tests.factories import AssistantFactory, MembershipFactory

pytestmark = pytest.mark.django_db

SECRET = "shop-api-key-7Hq2Zp"


@pytest.fixture
def shop():
    with ShopServer() as server:
        yield server


@pytest.fixture
def admin():
    return MembershipFactory(role=Membership.Role.ADMIN)


def api_for(membership) -> APIClient:
    api = APIClient()
    api.force_authenticate(membership.user)
    return api


def tools_url(account_id, suffix="") -> str:
    return f"/api/v1/captain/accounts/{account_id}/custom-tools/{suffix}"


def tool_body(shop, **fields) -> dict:
    return {
        "name": "order_status",
        "description": "Look up an order's status.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}},
            "required": ["order_id"],
        },
        "url_template": shop.base + "/orders/{{ order_id }}",
        "auth_type": "api_key",
        "secret": SECRET,
        "response_path": "$.order.status",
        **fields,
    }


def test_crud_with_a_write_only_secret(admin, shop):
    api = api_for(admin)

    created = api.post(tools_url(admin.account_id), tool_body(shop), format="json")
    assert created.status_code == 201, created.json()
    data = created.json()
    assert data["has_secret"] is True and "secret" not in data and "secret_encrypted" not in data
    assert SECRET not in json.dumps(data)
    tool = CustomTool.objects.get(pk=data["id"])
    assert tool.account_id == admin.account_id and secret_decrypt(tool.secret_encrypted) == SECRET

    listed = api.get(tools_url(admin.account_id)).json()
    assert [t["name"] for t in listed] == ["order_status"] and SECRET not in json.dumps(listed)

    patched = api.patch(
        tools_url(admin.account_id, f"{tool.pk}/"), {"method": "POST", "body_template": ""}, format="json"
    )
    assert patched.status_code == 200, patched.json()
    assert patched.json()["needs_confirmation"] is True and patched.json()["has_secret"] is True
    tool.refresh_from_db()
    assert secret_decrypt(tool.secret_encrypted) == SECRET  # omitted: kept

    cleared = api.patch(tools_url(admin.account_id, f"{tool.pk}/"), {"secret": ""}, format="json")
    assert cleared.json()["has_secret"] is False

    assert api.delete(tools_url(admin.account_id, f"{tool.pk}/")).status_code == 204
    assert not CustomTool.objects.exists()


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"name": "faq_lookup"}, "name"),
        ({"url_template": "http://169.254.169.254/latest/meta-data/"}, "url_template"),
        ({"url_template": "https://{{ order_id }}.example/"}, "url_template"),
        ({"response_template": "{{ response.__class__ }}"}, "response_template"),
        ({"timeout_seconds": 45}, "timeout_seconds"),
        ({"parameters": {"type": "object", "properties": {"x": {"type": "nonsense"}}}}, "parameters"),
    ],
)
def test_bad_input_is_a_400_with_field_messages_and_nothing_stored(admin, shop, fields, field):
    response = api_for(admin).post(tools_url(admin.account_id), tool_body(shop, **fields), format="json")

    assert response.status_code == 400
    assert field in response.json()
    assert not CustomTool.objects.exists()


def test_a_bad_patch_changes_nothing(admin, shop):
    api = api_for(admin)
    tool_id = api.post(tools_url(admin.account_id), tool_body(shop), format="json").json()["id"]

    response = api.patch(
        tools_url(admin.account_id, f"{tool_id}/"), {"url_template": "file:///etc/passwd"}, format="json"
    )

    assert response.status_code == 400 and "url_template" in response.json()
    assert CustomTool.objects.get().url_template == shop.base + "/orders/{{ order_id }}"


def test_another_accounts_tool_is_invisible_and_unusable(admin, shop):
    other = MembershipFactory(role=Membership.Role.ADMIN)
    theirs = api_for(other).post(tools_url(other.account_id), tool_body(shop), format="json").json()
    api = api_for(admin)

    assert api.get(tools_url(admin.account_id)).json() == []
    for method in ("get", "patch", "delete"):
        assert getattr(api, method)(tools_url(admin.account_id, f"{theirs['id']}/")).status_code == 404
    test_call = api.post(tools_url(admin.account_id, f"{theirs['id']}/test-call/"), {}, format="json")
    assert test_call.status_code == 404
    # Nor through the other account's URL: not a member there.
    assert api.get(tools_url(other.account_id)).status_code in (403, 404)

    assistant = AssistantFactory(account=admin.account)
    scenarios = f"/api/v1/captain/accounts/{admin.account_id}/assistants/{assistant.id}/scenarios/"
    scenario = {"title": "Orders", "description": "Order questions", "instruction": "Help."}
    refused = api.post(scenarios, {**scenario, "tools": ["order_status"]}, format="json")
    assert refused.status_code == 400
    assert "Unknown tool(s): order_status" in str(refused.json()["tools"])
    assert not Scenario.objects.exists()

    api.post(tools_url(admin.account_id), tool_body(shop), format="json")
    accepted = api.post(
        scenarios,
        {**scenario, "tools": ["order_status", "faq_lookup"], "mode": "planning", "max_tool_calls": 6},
        format="json",
    )
    assert accepted.status_code == 201, accepted.json()
    assert accepted.json()["tools"] == ["order_status", "faq_lookup"]
    assert (accepted.json()["mode"], accepted.json()["max_tool_calls"]) == ("planning", 6)


def test_scenario_mode_and_tool_call_bounds(admin):
    assistant = AssistantFactory(account=admin.account)
    scenarios = f"/api/v1/captain/accounts/{admin.account_id}/assistants/{assistant.id}/scenarios/"
    base = {"title": "Orders", "description": "Order questions", "instruction": "Help."}
    api = api_for(admin)

    assert api.post(scenarios, {**base, "max_tool_calls": 31}, format="json").status_code == 400
    assert api.post(scenarios, {**base, "max_tool_calls": 0}, format="json").status_code == 400
    assert api.post(scenarios, {**base, "mode": "chaos"}, format="json").status_code == 400
    created = api.post(scenarios, base, format="json").json()
    assert (created["mode"], created["max_tool_calls"]) == ("tools", 10)


def test_the_test_call_shows_the_request_redacted_and_the_response(admin, shop):
    api = api_for(admin)
    tool_id = api.post(tools_url(admin.account_id), tool_body(shop), format="json").json()["id"]

    ok = api.post(
        tools_url(admin.account_id, f"{tool_id}/test-call/"),
        {"arguments": {"order_id": "1042"}},
        format="json",
    )
    assert ok.status_code == 200
    record = ok.json()
    assert record["request"]["method"] == "GET"
    assert record["request"]["url"] == f"{shop.base}/orders/1042"
    assert record["request"]["headers"]["X-API-Key"] == "[redacted]"
    assert record["response"]["status"] == 200 and "shipped" in record["response"]["body"]
    assert record["shown_to_model"] == "shipped" and record["error"] == ""
    assert shop.requests[-1]["headers"]["X-API-Key"] == SECRET  # really sent
    assert SECRET not in json.dumps(record)

    bad_args = api.post(
        tools_url(admin.account_id, f"{tool_id}/test-call/"), {"arguments": {}}, format="json"
    )
    assert bad_args.status_code == 200 and "invalid arguments" in bad_args.json()["error"]

    api.patch(
        tools_url(admin.account_id, f"{tool_id}/"),
        {"url_template": shop.base + "/error500", "response_path": ""},
        format="json",
    )
    failed = api.post(
        tools_url(admin.account_id, f"{tool_id}/test-call/"), {"arguments": {"order_id": "1"}}, format="json"
    ).json()
    assert failed["error"] == "the service answered HTTP 500" and failed["response"]["status"] == 500
    assert SpanRecord.objects.filter(name="captain.http_tool").count() == 2  # the bad arguments sent nothing


def test_members_who_are_not_admins_cannot_manage_tools(shop):
    agent = MembershipFactory(role=Membership.Role.AGENT)

    assert api_for(agent).get(tools_url(agent.account_id)).status_code == 403
    assert api_for(agent).post(tools_url(agent.account_id), tool_body(shop), format="json").status_code == 403
