"""Model endpoints: the platform's key goes only to the platform's endpoints, tenants pick endpoints and models
by name from what the operator offers, a reply costs what the operator set for its model, and an account's own
endpoint is used with its own key (encrypted at rest). Real HTTP: two scripted model servers on 127.0.0.1."""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet
from django.db import connection

from captain.answering.models import CreditBalance, CreditLedgerEntry, CreditReservation, ReplyJob, Run
from captain.answering.services.runs import run_for_message
from captain.assistants.models import ModelEndpoint
from captain.assistants.services.model_endpoints import (
    EndpointUnavailable,
    endpoint_and_model,
    model_endpoint_save,
    operator_endpoints,
)
from captain.crypto import SecretUnreadable, secret_decrypt, secret_encrypt
from captain.routing.models import RoutingConfig
from tests.factories import AssistantInboxFactory, ConversationFactory, MessageFactory, ScenarioFactory
from tests.support.fake_llm_server import FakeLLMServer, text

pytestmark = [pytest.mark.django_db]

PLATFORM_KEY = "platform-secret-key"
TENANT_KEY = "tenant-own-key"


@pytest.fixture
def platform(settings, redis_url, monkeypatch):
    """The operator's endpoint: a scripted model server, its key read from an env variable."""
    monkeypatch.setenv("TEST_PLATFORM_KEY", PLATFORM_KEY)
    with FakeLLMServer() as server:
        settings.CAPTAIN = {
            **settings.CAPTAIN,
            "MODEL_ENDPOINTS": {
                "main": {
                    "base_url": server.base_url,
                    "api_key_env": "TEST_PLATFORM_KEY",
                    "models": {"small": 1, "large": 10},
                }
            },
            "LLM_TIMEOUT_SECONDS": 5.0,
            "LLM_MAX_RETRIES": 0,
            "OWN_ENDPOINT_CREDITS_PER_REPLY": 2,
        }
        yield server


@pytest.fixture
def tenant_server():
    with FakeLLMServer() as server:
        yield server


def pending_message(assistant, content="Where is my parcel?"):
    link = AssistantInboxFactory(assistant=assistant)
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox)
    return MessageFactory(conversation=conversation, content=content, reply_job=ReplyJob.Status.PENDING)


def test_operator_endpoints_come_from_settings_with_models_and_prices(platform):
    endpoints = operator_endpoints()
    assert list(endpoints) == ["main"]
    assert endpoints["main"].model_credits == {"small": 1, "large": 10}
    assert endpoints["main"].api_key == PLATFORM_KEY
    assert PLATFORM_KEY not in repr(endpoints["main"])  # the key never reaches logs through a repr


def test_a_reply_costs_what_the_operator_set_for_its_model(platform):
    assistant = AssistantInboxFactory().assistant
    assistant.model_endpoint, assistant.model = "main", "large"
    assistant.save()
    message = pending_message(assistant)
    platform.push(text("It left our warehouse today."))

    assert run_for_message(message_id=message.id) == "reply"

    assert platform.requests[0]["model"] == "large"
    assert CreditLedgerEntry.objects.get().amount == 10
    assert CreditBalance.objects.get(account=assistant.account).used == 10


def test_a_model_the_operator_does_not_offer_is_never_called(platform):
    """Stored before the operator removed it (or written straight to the database): the run hands over with the
    reason, calls nothing and charges nothing."""
    assistant = AssistantInboxFactory().assistant
    assistant.model_endpoint, assistant.model = "main", "gpt-expensive"
    assistant.save()
    message = pending_message(assistant)

    assert run_for_message(message_id=message.id) == "error"

    assert platform.requests == []
    run = Run.objects.get()
    assert "'gpt-expensive' is not offered on endpoint 'main'" in run.detail
    assert CreditLedgerEntry.objects.count() == 0
    assert not CreditReservation.objects.exists()


def test_own_endpoint_gets_only_the_tenants_key_and_the_platform_gets_only_its_own(platform, tenant_server):
    """Two assistants answer in one test, one on the platform's endpoint and one on the tenant's own. Each server
    sees only its own key; the router of the tenant's graph also goes to the tenant's endpoint."""
    own_assistant = AssistantInboxFactory().assistant
    model_endpoint_save(
        account=own_assistant.account,
        name="ours",
        base_url=tenant_server.base_url,
        model_names=["tenant-model"],
        api_key=TENANT_KEY,
    )
    own_assistant.model_endpoint = "ours"
    own_assistant.save()
    ScenarioFactory(assistant=own_assistant, key="parcels", title="Parcels", description="Where a parcel is")
    # Custom mode: a clear switch ("Where is my parcel?" -> Parcels) is still put to the router model.
    RoutingConfig.objects.create(assistant=own_assistant, default_mode="custom")
    tenant_server.set_responder(lambda request: text("parcels" if "tools" not in request else "On its way."))

    platform_assistant = AssistantInboxFactory().assistant
    platform_assistant.model_endpoint = "main"
    platform_assistant.save()
    platform.push(text("Hello from the platform."))

    assert run_for_message(message_id=pending_message(own_assistant).id) == "reply"
    assert run_for_message(message_id=pending_message(platform_assistant).id) == "reply"

    assert len(tenant_server.authorizations) >= 2  # the router call and the agent's answer
    assert set(tenant_server.authorizations) == {f"Bearer {TENANT_KEY}"}
    assert {r["model"] for r in tenant_server.requests} == {"tenant-model"}
    assert platform.authorizations == [f"Bearer {PLATFORM_KEY}"]
    # An own endpoint's reply costs what the operator set for own endpoints.
    assert CreditLedgerEntry.objects.get(account=own_assistant.account).amount == 2


def test_own_endpoint_key_is_encrypted_at_rest(platform, tenant_server):
    assistant = AssistantInboxFactory().assistant
    endpoint = model_endpoint_save(
        account=assistant.account,
        name="ours",
        base_url=tenant_server.base_url,
        model_names=[],
        api_key=TENANT_KEY,
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT api_key_encrypted FROM captain_modelendpoint WHERE id = %s", [endpoint.pk])
        (stored,) = cursor.fetchone()
    assert TENANT_KEY not in stored and stored
    assert secret_decrypt(stored) == TENANT_KEY
    resolved, model = endpoint_and_model(account_id=assistant.account_id, endpoint="ours", model="any-name")
    assert resolved.api_key == TENANT_KEY and model == "any-name"  # no model list: any name on its own server

    # Keeping the key on an update: None leaves it as it was.
    model_endpoint_save(
        account=assistant.account,
        name="ours",
        base_url=tenant_server.base_url,
        model_names=["m"],
        api_key=None,
        endpoint=endpoint,
    )
    endpoint.refresh_from_db()
    assert secret_decrypt(endpoint.api_key_encrypted) == TENANT_KEY


def test_secrets_keys_rotate_and_a_lost_key_is_a_clear_error(settings):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.CAPTAIN = {**settings.CAPTAIN, "SECRETS_KEYS": [old]}
    token = secret_encrypt("k-123")
    settings.CAPTAIN = {**settings.CAPTAIN, "SECRETS_KEYS": [new, old]}
    assert secret_decrypt(token) == "k-123"  # old secrets still readable after rotation
    settings.CAPTAIN = {**settings.CAPTAIN, "SECRETS_KEYS": [new]}
    with pytest.raises(SecretUnreadable):
        secret_decrypt(token)


def test_an_endpoint_name_that_does_not_exist_or_belongs_to_another_account_is_refused(
    platform, tenant_server
):
    mine = AssistantInboxFactory().assistant
    theirs = AssistantInboxFactory().assistant
    model_endpoint_save(
        account=theirs.account, name="theirs", base_url=tenant_server.base_url, model_names=[], api_key="x"
    )
    with pytest.raises(EndpointUnavailable, match="no model endpoint named 'theirs'"):
        endpoint_and_model(account_id=mine.account_id, endpoint="theirs", model="")
    with pytest.raises(EndpointUnavailable, match="no model endpoint named"):
        endpoint_and_model(account_id=mine.account_id, endpoint="http://169.254.169.254/", model="")


def test_own_endpoints_can_be_turned_off_by_the_operator(platform, tenant_server, settings):
    assistant = AssistantInboxFactory().assistant
    model_endpoint_save(
        account=assistant.account, name="ours", base_url=tenant_server.base_url, model_names=[], api_key="x"
    )
    settings.CAPTAIN = {**settings.CAPTAIN, "OWN_ENDPOINTS_ALLOWED": False}
    with pytest.raises(EndpointUnavailable, match="does not allow"):
        endpoint_and_model(account_id=assistant.account_id, endpoint="ours", model="")
    assert ModelEndpoint.objects.count() == 1


@pytest.mark.parametrize(
    ("configured", "reason"),
    [
        ('{"main": {"base_url": ', "not valid JSON"),
        (
            {"main": {"base_url": "https://llm.example/v1", "models": {"m": 1}, "api_key_env": "NOPE_UNSET"}},
            "NOPE_UNSET",
        ),
        ({"main": {"models": {"m": 1}}}, "needs a 'base_url'"),
        ({"main": {"base_url": "https://llm.example/v1", "models": {"m": -1}}}, "non-negative"),
        ({"main": {"base_url": "https://llm.example/v1"}}, "offer no model"),
    ],
)
def test_a_malformed_endpoint_setting_stops_start_up_with_the_reason(settings, configured, reason):
    from captain.checks import check_model_endpoints

    settings.CAPTAIN = {**settings.CAPTAIN, "MODEL_ENDPOINTS": configured}
    errors = check_model_endpoints(None)
    assert [e.id for e in errors] == ["captain.E002"]
    assert reason in errors[0].msg
