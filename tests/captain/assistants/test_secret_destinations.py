"""A write-only secret never follows a new destination: when a custom tool's URL or an own model endpoint's base
URL moves to another scheme, host or port and the secret is not given again, the stored one is dropped, the API
answer and the admin say so, and the tool sends nothing until an administrator enters a secret again. A path change on
the same origin keeps it; a secret given with the change is the one stored."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from captain.actions.models import CustomTool
from captain.assistants.models import ModelEndpoint
from captain.assistants.services.destinations import SECRET_DROPPED_MESSAGE
from captain.crypto import secret_decrypt, secret_encrypt
from helpdesk.models import Membership
from tests.captain.actions.test_custom_http_tools import ShopServer
from tests.captain.actions.test_custom_tools_api import api_for, tools_url
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

SECRET = "bearer-for-the-first-shop-9Xq"


@pytest.fixture
def shops():
    with ShopServer() as first, ShopServer() as second:
        yield first, second


@pytest.fixture
def admin():
    return MembershipFactory(role=Membership.Role.ADMIN)


@pytest.fixture
def endpoint(admin):
    """An own endpoint with a stored key (127.0.0.1 is allowlisted in tests; nothing is sent to it here)."""
    return ModelEndpoint.objects.create(
        account=admin.account,
        name="ours",
        base_url="http://127.0.0.1:9/v1",
        model_names=["m1"],
        api_key_encrypted=secret_encrypt("sk-tenant-123"),
    )


def endpoints_url(account_id, suffix="") -> str:
    return f"/api/v1/captain/accounts/{account_id}/model-endpoints/{suffix}"


def create_tool(api, admin, shop) -> int:
    created = api.post(
        tools_url(admin.account_id),
        {
            "name": "order_status",
            "description": "Look up an order's status.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
            "url_template": shop.base + "/orders/{{ order_id }}",
            "auth_type": "bearer",
            "secret": SECRET,
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    assert created.json()["notices"] == []
    return created.json()["id"]


def test_a_tool_moved_to_another_port_loses_its_secret_and_the_test_call_sends_none(admin, shops):
    first, second = shops
    api = api_for(admin)
    tool_id = create_tool(api, admin, first)

    moved = api.patch(
        tools_url(admin.account_id, f"{tool_id}/"),
        {"url_template": second.base + "/orders/{{ order_id }}"},
        format="json",
    )

    assert moved.status_code == 200, moved.json()
    assert moved.json()["has_secret"] is False
    assert moved.json()["notices"] == [SECRET_DROPPED_MESSAGE]
    assert CustomTool.objects.get().secret_encrypted == ""
    test_call = api.post(
        tools_url(admin.account_id, f"{tool_id}/test-call/"), {"arguments": {"order_id": "7"}}, format="json"
    )
    assert "no secret stored" in test_call.json()["error"]
    assert (
        second.requests == [] and first.requests == []
    )  # nothing sent, least of all the first shop's secret


def test_a_path_change_on_the_same_origin_keeps_the_secret(admin, shops):
    first, _ = shops
    api = api_for(admin)
    tool_id = create_tool(api, admin, first)

    moved = api.patch(
        tools_url(admin.account_id, f"{tool_id}/"),
        {"url_template": first.base + "/v2/orders/{{ order_id }}"},
        format="json",
    )

    assert moved.json()["has_secret"] is True and moved.json()["notices"] == []
    assert secret_decrypt(CustomTool.objects.get().secret_encrypted) == SECRET


def test_a_secret_given_with_the_new_destination_is_stored(admin, shops):
    first, second = shops
    api = api_for(admin)
    tool_id = create_tool(api, admin, first)

    moved = api.patch(
        tools_url(admin.account_id, f"{tool_id}/"),
        {"url_template": second.base + "/orders/{{ order_id }}", "secret": "for-the-second-shop"},
        format="json",
    )

    assert moved.json()["has_secret"] is True and moved.json()["notices"] == []
    assert secret_decrypt(CustomTool.objects.get().secret_encrypted) == "for-the-second-shop"


def test_an_endpoint_moved_to_another_port_loses_its_key(admin, endpoint):
    api = api_for(admin)

    same_origin = api.patch(
        endpoints_url(admin.account_id, f"{endpoint.pk}/"),
        {"base_url": "http://127.0.0.1:9/v2"},
        format="json",
    )
    assert same_origin.json()["has_api_key"] is True and same_origin.json()["notices"] == []

    moved = api.patch(
        endpoints_url(admin.account_id, f"{endpoint.pk}/"),
        {"base_url": "http://127.0.0.1:10/v2"},
        format="json",
    )

    assert moved.status_code == 200, moved.json()
    assert moved.json()["has_api_key"] is False
    assert moved.json()["notices"] == [SECRET_DROPPED_MESSAGE]
    assert ModelEndpoint.objects.get().api_key_encrypted == ""


# ---- the admin ------------------------------------------------------------------------------------------------


@pytest.fixture
def admin_client(admin):
    user = UserFactory(is_staff=True)
    user.save()  # UserFactory skips the post-generation save: without it the session's password hash is stale
    MembershipFactory(account=admin.account, user=user, role=Membership.Role.ADMIN)
    client = Client()
    client.force_login(user)
    return client


def test_the_tool_admin_drops_the_secret_for_a_new_host_and_says_so(admin, admin_client, shops):
    first, second = shops
    tool_id = create_tool(api_for(admin), admin, first)
    tool = CustomTool.objects.get(pk=tool_id)
    form = {
        "account": admin.account_id,
        "name": tool.name,
        "description": tool.description,
        "parameters": json.dumps(tool.parameters),
        "method": "GET",
        "url_template": second.base + "/orders/{{ order_id }}",
        "body_template": "",
        "auth_type": "bearer",
        "auth_header": "",
        "auth_username": "",
        "identity_header": "",
        "timeout_seconds": "5",
        "max_response_bytes": "200000",
        "response_path": "",
        "response_template": "",
        "confirmation_template": "",
        "enabled": "on",
        "secret": "",
    }

    response = admin_client.post(f"/admin/captain/customtool/{tool_id}/change/", form, follow=True)

    assert response.status_code == 200
    assert SECRET_DROPPED_MESSAGE in response.content.decode()
    assert CustomTool.objects.get().secret_encrypted == ""


def test_the_endpoint_admin_drops_the_key_for_a_new_host_and_says_so(admin, admin_client, endpoint):
    form = {
        "account": admin.account_id,
        "name": "ours",
        "base_url": "http://127.0.0.1:10/v1",
        "model_names": '["m1"]',
        "new_api_key": "",
    }

    response = admin_client.post(f"/admin/captain/modelendpoint/{endpoint.pk}/change/", form, follow=True)

    assert response.status_code == 200
    assert SECRET_DROPPED_MESSAGE in response.content.decode()
    assert ModelEndpoint.objects.get().api_key_encrypted == ""
