"""Model endpoints over the REST API and the admin: tenants pick the operator's endpoints and models by name,
may add their own endpoint only with their own key and only at an address the outbound policy allows, and never
point a router at a URL (which used to receive the platform's key)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from captain.answering.models import CreditLedgerEntry, ReplyJob
from captain.answering.services.runs import run_for_message
from captain.assistants.models import Assistant, ModelEndpoint
from captain.routing.models import RoutingConfig
from helpdesk.models import Membership
from tests.factories import (
    AssistantInboxFactory,
    ConversationFactory,
    MembershipFactory,
    MessageFactory,
    ScenarioFactory,
)
from tests.support.fake_llm_server import FakeLLMServer, text

pytestmark = pytest.mark.django_db

PLATFORM_KEY = "platform-secret-key"


@pytest.fixture
def platform(settings, redis_url):
    with FakeLLMServer() as server:
        settings.CAPTAIN = {
            **settings.CAPTAIN,
            "MODEL_ENDPOINTS": {
                "main": {
                    "base_url": server.base_url,
                    "api_key": PLATFORM_KEY,
                    "models": {"small": 1, "large": 10},
                }
            },
            "LLM_TIMEOUT_SECONDS": 5.0,
            "LLM_MAX_RETRIES": 0,
        }
        yield server


@pytest.fixture
def admin():
    return MembershipFactory(role=Membership.Role.ADMIN)


def api_for(membership):
    api = APIClient()
    api.force_authenticate(membership.user)
    return api


NO_NODES = {"nodes": [], "edges": [], "rules": []}
"""A routing PUT names its three lists, even empty (captain.routing.api.routing.RoutingGraphApi.put)."""


def endpoints_url(account_id, suffix=""):
    return f"/api/v1/captain/accounts/{account_id}/model-endpoints/{suffix}"


def test_router_url_from_a_tenant_never_receives_the_platform_key(platform, admin):
    """The attack: a tenant admin puts its own server in the routing config. Before, the router client was built
    with that URL and the server's key. Now a URL is not an endpoint name (400), and the old field is ignored."""
    assistant = AssistantInboxFactory(assistant__account=admin.account).assistant
    ScenarioFactory(assistant=assistant, key="billing", title="Billing", description="Invoices")
    routing_url = f"/api/v1/captain/accounts/{admin.account_id}/assistants/{assistant.id}/routing/"
    with FakeLLMServer() as attacker:
        refused = api_for(admin).put(
            routing_url,
            {"config": {"default_mode": "router", "router_endpoint": attacker.base_url}, **NO_NODES},
            format="json",
        )
        assert refused.status_code == 400
        assert "no model endpoint named" in str(refused.json())

        old_field = api_for(admin).put(
            routing_url,
            {"config": {"default_mode": "router", "router_base_url": attacker.base_url}, **NO_NODES},
            format="json",
        )
        assert old_field.status_code == 200
        assert RoutingConfig.objects.get(assistant=assistant).router_endpoint == ""

        platform.set_responder(lambda request: text("billing" if "tools" not in request else "Sure."))
        conversation = ConversationFactory(contact_inbox__inbox=assistant.assistant_inboxes.get().inbox)
        message = MessageFactory(
            conversation=conversation, content="My invoice", reply_job=ReplyJob.Status.PENDING
        )
        assert run_for_message(message_id=message.id) == "reply"

        assert attacker.requests == [] and attacker.authorizations == []
    assert platform.authorizations and set(platform.authorizations) == {f"Bearer {PLATFORM_KEY}"}


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"model": "gpt-expensive"}, "'gpt-expensive' is not offered on endpoint 'main'"),
        ({"model_endpoint": "elsewhere"}, "no model endpoint named 'elsewhere'"),
        ({"model_endpoint": "https://api.openai.com/v1"}, "no model endpoint named"),
    ],
)
def test_assistant_model_choice_is_checked_against_what_the_operator_offers(platform, admin, body, error):
    response = api_for(admin).post(
        f"/api/v1/captain/accounts/{admin.account_id}/assistants/", {"name": "A", **body}, format="json"
    )
    assert response.status_code == 400
    assert error in str(response.json()["model"])
    assert not Assistant.objects.exists()


def test_assistant_may_pick_an_offered_model_and_pays_its_price(platform, admin):
    response = api_for(admin).post(
        f"/api/v1/captain/accounts/{admin.account_id}/assistants/",
        {"name": "A", "model_endpoint": "main", "model": "large"},
        format="json",
    )
    assert response.status_code == 201, response.json()
    assistant = Assistant.objects.get()
    link = AssistantInboxFactory(assistant=assistant, inbox__account=admin.account)
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox)
    message = MessageFactory(conversation=conversation, content="Hi", reply_job=ReplyJob.Status.PENDING)
    platform.push(text("Hello!"))
    assert run_for_message(message_id=message.id) == "reply"
    assert CreditLedgerEntry.objects.get().amount == 10


def test_listing_shows_the_operators_endpoints_with_prices_and_never_a_key(platform, admin):
    ModelEndpoint.objects.create(account=admin.account, name="ours", base_url="https://llm.example/v1")
    body = api_for(admin).get(endpoints_url(admin.account_id)).json()
    assert body["server"] == [
        {
            "name": "main",
            "models": [{"name": "small", "credits_per_reply": 1}, {"name": "large", "credits_per_reply": 10}],
        }
    ]
    assert [e["name"] for e in body["own"]] == ["ours"]
    assert PLATFORM_KEY not in str(body) and "base_url" not in body["server"][0]


@pytest.mark.parametrize(
    "base_url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.5/v1",
        "http://localhost:6379/",
        "http://[::1]:8080/v1",
        "ftp://llm.example/v1",
        "file:///etc/passwd",
    ],
)
def test_own_endpoint_url_goes_through_the_outbound_policy(platform, admin, base_url):
    response = api_for(admin).post(
        endpoints_url(admin.account_id), {"name": "ours", "base_url": base_url, "api_key": "k"}, format="json"
    )
    assert response.status_code == 400
    assert "base_url" in response.json()
    assert not ModelEndpoint.objects.exists()


def test_own_endpoint_key_is_write_only(platform, admin):
    with FakeLLMServer() as own:
        created = api_for(admin).post(
            endpoints_url(admin.account_id),
            {"name": "ours", "base_url": own.base_url, "api_key": "sk-tenant-123", "model_names": ["m1"]},
            format="json",
        )
    assert created.status_code == 201, created.json()
    assert created.json()["has_api_key"] is True
    assert "sk-tenant-123" not in created.content.decode()
    detail = api_for(admin).get(endpoints_url(admin.account_id, f"{created.json()['id']}/"))
    assert "sk-tenant-123" not in detail.content.decode()
    assert "sk-tenant-123" not in ModelEndpoint.objects.get().api_key_encrypted


def test_own_endpoint_may_not_take_an_operator_endpoints_name(platform, admin):
    with FakeLLMServer() as own:
        response = api_for(admin).post(
            endpoints_url(admin.account_id), {"name": "main", "base_url": own.base_url}, format="json"
        )
    assert response.status_code == 400
    assert "name of one of the server's endpoints" in str(response.json()["name"])


def test_an_endpoint_in_use_cannot_be_deleted(platform, admin):
    endpoint = ModelEndpoint.objects.create(
        account=admin.account, name="ours", base_url="https://llm.example/v1"
    )
    AssistantInboxFactory(assistant__account=admin.account, assistant__model_endpoint="ours")
    response = api_for(admin).delete(endpoints_url(admin.account_id, f"{endpoint.id}/"))
    assert response.status_code == 400
    assert ModelEndpoint.objects.filter(pk=endpoint.pk).exists()


def test_agents_cannot_read_or_write_endpoints(platform):
    agent = MembershipFactory(role=Membership.Role.AGENT)
    assert api_for(agent).get(endpoints_url(agent.account_id)).status_code == 403
    assert (
        api_for(agent)
        .post(
            endpoints_url(agent.account_id),
            {"name": "x", "base_url": "https://llm.example/v1"},
            format="json",
        )
        .status_code
        == 403
    )


def test_another_accounts_endpoint_is_not_found(platform, admin):
    other = ModelEndpoint.objects.create(
        account=MembershipFactory().account, name="theirs", base_url="https://llm.example/v1"
    )
    assert api_for(admin).get(endpoints_url(admin.account_id, f"{other.id}/")).status_code == 404
    assert api_for(admin).delete(endpoints_url(admin.account_id, f"{other.id}/")).status_code == 404
    assert ModelEndpoint.objects.filter(pk=other.pk).exists()
