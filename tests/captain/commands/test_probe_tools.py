"""`manage.py captain_probe_tools` against the scripted model server on 127.0.0.1, and the per-model capability
setting it recommends: operator endpoints (setting, endpoint spec), an account's own endpoint (row, API, admin).

The scripts decide from the request itself (tools offered natively or not), like the real models they stand for:
a model with working tool calls, and one that writes its call as a ```json block (Qwen2.5-Coder with its stock
template, LOCAL_LLM.md) but follows the text protocol."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from rest_framework.test import APIClient

from captain.assistants.models import ModelEndpoint
from captain.assistants.services.model_endpoints import endpoint_for, operator_clients_clear
from helpdesk.models import Membership
from tests.factories import AccountFactory, MembershipFactory, UserFactory
from tests.support.fake_llm_server import FakeLLMServer, offered_tools, system_prompt, text, tool_call

pytestmark = pytest.mark.django_db

ACTION = 'Thought: I must look the order up.\n<action name="get_order_status">{"order_id": "A-1042"}</action>'


def native_model(request):
    if offered_tools(request):
        return tool_call("get_order_status", {"order_id": "A-1042"})
    return text(ACTION)


def text_only_model(request):
    if offered_tools(request):
        return text('```json\n{"name": "get_order_status", "arguments": {"order_id": "A-1042"}}\n```')
    return text(ACTION)


def hopeless_model(request):
    return text("Your order is on its way!")


def schema_breaking_model(request):
    # Calls natively but with an argument the schema forbids; writes the action right.
    if offered_tools(request):
        return tool_call("get_order_status", {"order": "A-1042"})
    return text(ACTION)


@pytest.fixture
def server(settings):
    with FakeLLMServer() as fake:
        settings.CAPTAIN = {
            **settings.CAPTAIN,
            "OPENAI_BASE_URL": fake.base_url,
            "DEFAULT_MODEL": "small",
            "MODEL_ENDPOINTS": None,
            "TEXT_TOOL_MODELS": "other",
            "LLM_TIMEOUT_SECONDS": 5.0,
            "LLM_MAX_RETRIES": 0,
        }
        operator_clients_clear()
        yield fake
        operator_clients_clear()


def probe(*args: str) -> str:
    out = io.StringIO()
    call_command("captain_probe_tools", *args, stdout=out)
    return out.getvalue()


def test_a_native_capable_model_is_recommended_native_tool_calls(server):
    server.set_responder(native_model)
    output = probe()
    assert "native tool calls: works (get_order_status" in output
    assert "text protocol:     works" in output
    assert "recommended: native tool calls" in output
    native, text_request = server.requests
    assert native["tool_choice"] == "auto" and offered_tools(native) == ["get_order_status"]
    # The text probe offers no native tools, describes the tool in the prompt and streams.
    assert "tools" not in text_request and text_request["stream"] is True
    assert '<action name="TOOL">' in system_prompt(text_request)
    assert "- get_order_status:" in system_prompt(text_request)


def test_a_text_only_model_is_recommended_the_text_protocol(server):
    server.set_responder(text_only_model)
    output = probe("--model", "small")
    assert "native tool calls: fails (the call came back as text" in output
    assert "text protocol:     works (get_order_status" in output
    assert "recommended: the text tool protocol" in output
    # For the server's default endpoint --save prints the setting to configure (keeping the models already in).
    output = probe("--save")
    assert "CAPTAIN_TEXT_TOOL_MODELS=other,small" in output


def test_schema_invalid_native_arguments_do_not_count(server):
    server.set_responder(schema_breaking_model)
    output = probe()
    assert "native tool calls: fails (tool calls with a wrong name or invalid arguments" in output
    assert "recommended: the text tool protocol" in output


def test_a_model_that_never_calls_the_tool_is_not_saved(server):
    server.set_responder(hopeless_model)
    account = AccountFactory()
    row = ModelEndpoint.objects.create(
        account=account,
        name="ours",
        base_url=server.base_url,
        model_names=["small"],
        text_tool_models=["small"],
    )
    output = probe("--account", str(account.pk), "--endpoint", "ours", "--save")
    assert "recommended: none works" in output and "not saved" in output
    row.refresh_from_db()
    assert row.text_tool_models == ["small"]


def test_save_updates_the_own_endpoints_row_both_ways(server):
    account = AccountFactory()
    row = ModelEndpoint.objects.create(
        account=account, name="ours", base_url=server.base_url, model_names=["small", "big"]
    )
    server.set_responder(text_only_model)
    output = probe("--account", str(account.pk), "--endpoint", "ours", "--model", "small", "--save")
    assert "saved: text_tool_models of endpoint 'ours' = [\"small\"]" in output
    row.refresh_from_db()
    assert row.text_tool_models == ["small"]
    assert endpoint_for(account_id=account.pk, name="ours").uses_text_tools("small")

    server.set_responder(native_model)
    probe("--account", str(account.pk), "--endpoint", "ours", "--model", "small", "--save")
    row.refresh_from_db()
    assert row.text_tool_models == []
    assert not endpoint_for(account_id=account.pk, name="ours").uses_text_tools("small")


def test_unknown_endpoints_and_models_are_refused(server):
    with pytest.raises(CommandError, match="no endpoint named"):
        probe("--endpoint", "nope")
    account = AccountFactory()
    ModelEndpoint.objects.create(
        account=account, name="ours", base_url=server.base_url, model_names=["small"]
    )
    with pytest.raises(CommandError, match="not offered"):
        probe("--account", str(account.pk), "--endpoint", "ours", "--model", "huge")
    assert server.requests == []


# ---- the setting ------------------------------------------------------------------------------------------------


def test_operator_endpoints_declare_text_tool_models(settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "MODEL_ENDPOINTS": None, "TEXT_TOOL_MODELS": " a, b ,"}
    default = endpoint_for(account_id=1, name="")
    assert default.text_tool_models == frozenset({"a", "b"})
    assert default.uses_text_tools("a") and not default.uses_text_tools("c")

    settings.CAPTAIN = {
        **settings.CAPTAIN,
        "MODEL_ENDPOINTS": {
            "main": {"base_url": "http://127.0.0.1:9/v1", "models": ["x", "y"], "text_tools": ["y"]}
        },
    }
    main = endpoint_for(account_id=1, name="main")
    assert (main.uses_text_tools("x"), main.uses_text_tools("y")) == (False, True)

    settings.CAPTAIN = {
        **settings.CAPTAIN,
        "MODEL_ENDPOINTS": {"main": {"base_url": "http://127.0.0.1:9/v1", "text_tools": "y"}},
    }
    with pytest.raises(ValueError, match="'text_tools' must list"):
        endpoint_for(account_id=1, name="main")


def test_the_api_shows_and_sets_text_tool_models():
    admin = MembershipFactory(role=Membership.Role.ADMIN)
    api = APIClient()
    api.force_authenticate(admin.user)
    url = f"/api/v1/captain/accounts/{admin.account_id}/model-endpoints/"
    created = api.post(
        url,
        {
            "name": "ours",
            "base_url": "http://127.0.0.1:9/v1",
            "model_names": ["a"],
            "text_tool_models": ["a"],
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    assert created.json()["text_tool_models"] == ["a"]
    endpoint_id = created.json()["id"]
    # A PATCH without the field keeps it; with it, replaces it.
    kept = api.patch(f"{url}{endpoint_id}/", {"model_names": ["a", "b"]}, format="json")
    assert kept.status_code == 200 and kept.json()["text_tool_models"] == ["a"]
    changed = api.patch(f"{url}{endpoint_id}/", {"text_tool_models": ["b"]}, format="json")
    assert changed.json()["text_tool_models"] == ["b"]
    assert ModelEndpoint.objects.get(pk=endpoint_id).text_tool_models == ["b"]
    refused = api.patch(f"{url}{endpoint_id}/", {"text_tool_models": [""]}, format="json")
    assert refused.status_code == 400


def test_the_admin_edits_text_tool_models():
    account = AccountFactory()
    user = UserFactory(is_staff=True)
    user.save()
    MembershipFactory(account=account, user=user, role=Membership.Role.ADMIN)
    client = Client()
    client.force_login(user)
    response = client.post(
        "/admin/captain/modelendpoint/add/",
        {
            "account": account.pk,
            "name": "ours",
            "base_url": "http://127.0.0.1:9/v1",
            "model_names": '["m1"]',
            "text_tool_models": '["m1"]',
            "new_api_key": "k",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    endpoint = ModelEndpoint.objects.get()
    assert endpoint.text_tool_models == ["m1"]
    page = client.get(f"/admin/captain/modelendpoint/{endpoint.pk}/change/").content.decode()
    assert 'name="text_tool_models"' in page and 'name="new_api_key"' in page
    # Left empty, the list is empty (not JSON null): every model uses native tool calls.
    response = client.post(
        "/admin/captain/modelendpoint/add/",
        {"account": account.pk, "name": "other", "base_url": "http://127.0.0.1:9/v1", "model_names": "[]"},
    )
    assert response.status_code == 302
    assert ModelEndpoint.objects.get(name="other").text_tool_models == []
