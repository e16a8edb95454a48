"""The custom tool admin: the add page stores the secret encrypted and never shows it back, the test-call page
sends the request and shows it redacted with the response, and another account's tool is out of reach. The
scenario admin offers the account's custom tools, the mode and the tool-call bound."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from captain.actions.models import CustomTool
from captain.actions.services.custom_tools import custom_tool_save
from captain.crypto import secret_decrypt
from helpdesk.models import Membership
from tests.captain.actions.test_custom_http_tools import ShopServer
from tests.factories import AccountFactory, AssistantFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

SECRET = "admin-typed-token-5TgB"
ADD_URL = "/admin/captain/customtool/add/"


@pytest.fixture
def shop():
    with ShopServer() as server:
        yield server


@pytest.fixture
def account_a():
    return AccountFactory(name="Alpha Co")


@pytest.fixture
def client_a(account_a):
    user = UserFactory(is_staff=True)
    user.save()  # UserFactory skips the post-generation save: without it the session's password hash is stale
    MembershipFactory(account=account_a, user=user, role=Membership.Role.ADMIN)
    client = Client()
    client.force_login(user)
    return client


def form_data(account, shop, **fields) -> dict:
    return {
        "account": account.pk,
        "name": "order_status",
        "description": "Look up an order's status.",
        "parameters": json.dumps({"type": "object", "properties": {"order_id": {"type": "string"}}}),
        "method": "GET",
        "url_template": shop.base + "/orders/{{ order_id }}",
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
        "secret": SECRET,
        **fields,
    }


def test_the_add_page_stores_the_secret_encrypted_and_never_shows_it(client_a, account_a, shop):
    assert client_a.get(ADD_URL).status_code == 200

    response = client_a.post(ADD_URL, form_data(account_a, shop))

    assert response.status_code == 302, response.context["adminform"].form.errors
    tool = CustomTool.objects.get()
    assert SECRET not in tool.secret_encrypted and secret_decrypt(tool.secret_encrypted) == SECRET
    change = client_a.get(f"/admin/captain/customtool/{tool.pk}/change/").content.decode()
    assert SECRET not in change and "Test call" in change
    assert SECRET not in client_a.get("/admin/captain/customtool/").content.decode()
    assert client_a.get("/admin/captain/customtool/?secret_encrypted__startswith=g").status_code == 400

    # Saving again with the secret left blank keeps it.
    kept = form_data(account_a, shop, secret="", description="Where is my order?")
    kept.pop("account")
    assert client_a.post(f"/admin/captain/customtool/{tool.pk}/change/", kept).status_code == 302
    tool.refresh_from_db()
    assert tool.description == "Where is my order?" and secret_decrypt(tool.secret_encrypted) == SECRET


def test_the_add_page_shows_the_services_errors_and_stores_nothing(client_a, account_a, shop):
    response = client_a.post(
        ADD_URL, form_data(account_a, shop, url_template="http://169.254.169.254/{{ order_id }}")
    )

    assert response.status_code == 200
    assert "refused by the outbound policy" in str(response.context["adminform"].form.errors["url_template"])
    assert not CustomTool.objects.exists()
    assert SECRET not in response.content.decode()  # the password field is not rendered back


def test_the_test_call_page_shows_the_request_and_the_response(client_a, account_a, shop):
    tool = custom_tool_save(
        account=account_a,
        fields={
            "name": "order_status",
            "description": "Look up an order.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
            "url_template": shop.base + "/orders/{{ order_id }}",
            "auth_type": "bearer",
        },
        secret=SECRET,
    )
    url = f"/admin/captain/customtool/{tool.pk}/test-call/"
    assert client_a.get(url).status_code == 200

    page = client_a.post(url, {"arguments": '{"order_id": "1042"}'}).content.decode()

    assert shop.requests[-1]["path"] == "/orders/1042"
    assert shop.requests[-1]["headers"]["Authorization"] == f"Bearer {SECRET}"
    assert "HTTP 200" in page and "shipped" in page and f"{shop.base}/orders/1042" in page
    assert "[redacted]" in page and SECRET not in page

    bad = client_a.post(url, {"arguments": "[1, 2]"}).content.decode()
    assert "A JSON object of arguments." in bad


def test_another_accounts_tool_and_test_call_are_out_of_reach(client_a, shop):
    other = AccountFactory()
    theirs = custom_tool_save(
        account=other,
        fields={
            "name": "theirs",
            "description": "Theirs.",
            "url_template": shop.base + "/orders/1",
        },
    )

    assert client_a.get("/admin/captain/customtool/").content.decode().count("theirs") == 0
    assert client_a.get(f"/admin/captain/customtool/{theirs.pk}/test-call/").status_code == 404
    assert (
        client_a.post(f"/admin/captain/customtool/{theirs.pk}/test-call/", {"arguments": "{}"}).status_code
        == 404
    )
    assert shop.requests == []


def test_the_scenario_admin_offers_custom_tools_mode_and_tool_call_bound(client_a, account_a, shop):
    custom_tool_save(
        account=account_a,
        fields={"name": "order_status", "description": "Orders.", "url_template": shop.base + "/orders/1"},
    )
    custom_tool_save(
        account=AccountFactory(),
        fields={"name": "someone_elses", "description": "Not ours.", "url_template": shop.base + "/orders/1"},
    )
    assistant = AssistantFactory(account=account_a)

    page = client_a.get(f"/admin/captain/assistant/{assistant.pk}/change/").content.decode()

    assert 'value="order_status"' in page and "someone_elses" not in page
    assert 'name="scenarios-__prefix__-mode"' in page and 'name="scenarios-__prefix__-max_tool_calls"' in page


def test_a_scenario_saved_in_the_admin_may_use_the_accounts_custom_tool(client_a, account_a, shop):
    from captain.assistants.models import Scenario
    from tests.factories import ScenarioFactory
    from tests.helpdesk.test_admin import admin_form_data

    custom_tool_save(
        account=account_a,
        fields={"name": "order_status", "description": "Orders.", "url_template": shop.base + "/orders/1"},
    )
    scenario = ScenarioFactory(assistant=AssistantFactory(account=account_a), key="orders")
    url = f"/admin/captain/assistant/{scenario.assistant.pk}/change/"
    data = admin_form_data(client_a.get(url)) | {
        "scenarios-0-tools": ["order_status", "faq_lookup"],
        "scenarios-0-mode": "planning",
        "scenarios-0-max_tool_calls": "4",
    }

    assert client_a.post(url, data).status_code == 302
    scenario = Scenario.objects.get()
    assert (scenario.tools, scenario.mode, scenario.max_tool_calls) == (
        ["order_status", "faq_lookup"],
        "planning",
        4,
    )

    data["scenarios-0-max_tool_calls"] = "31"
    refused = client_a.post(url, data)
    assert refused.status_code == 200
    assert "1 to 30" in refused.content.decode()
