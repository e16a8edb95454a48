"""Django admin for captain: tenant scoping, template validation, scenario keys derived once and read-only."""

from __future__ import annotations

import pytest
from django.test import Client

from captain.answering.models import CreditBalance
from captain.assistants.models import Assistant, ModelEndpoint, Scenario
from captain.crypto import secret_decrypt
from captain.knowledge.models import FaqEntry
from captain.routing.models import RoutingConfig
from helpdesk.models import Membership
from tests.factories import (
    AccountFactory,
    AssistantFactory,
    CreditBalanceFactory,
    CreditLedgerEntryFactory,
    MembershipFactory,
    RunFactory,
    ScenarioFactory,
    UserFactory,
)
from tests.helpdesk.test_admin import admin_form_data

pytestmark = pytest.mark.django_db

ADD_URL = "/admin/captain/assistant/add/"


def change_url(obj) -> str:
    return f"/admin/{obj._meta.app_label}/{obj._meta.model_name}/{obj.pk}/change/"


@pytest.fixture
def account_a():
    return AccountFactory(name="Alpha Co")


@pytest.fixture
def account_b():
    return AccountFactory(name="Bravo Co")


@pytest.fixture
def client_a(account_a):
    user = UserFactory(is_staff=True)
    user.save()  # UserFactory skips the post-generation save: without it the session's password hash is stale
    MembershipFactory(account=account_a, user=user, role=Membership.Role.ADMIN)
    client = Client()
    client.force_login(user)
    return client


def new_assistant_data(account, *, instructions="", scenarios=(), faq=()) -> dict:
    data = {
        "account": account.pk,
        "name": "Captain",
        "instructions": instructions,
        "response_guidelines": "[]",
        "guardrails": "[]",
        "handoff_message": "A person will answer.",
        "resolution_message": "Bye.",
        "temperature": "0.2",
        "max_turns": "6",
        "knowledge_mode": "inject",
        "when_unknown": "offer",
        "scenarios-TOTAL_FORMS": str(len(scenarios)),
        "scenarios-INITIAL_FORMS": "0",
        "faq_entries-TOTAL_FORMS": str(len(faq)),
        "faq_entries-INITIAL_FORMS": "0",
        "memory_variables-TOTAL_FORMS": "0",
        "memory_variables-INITIAL_FORMS": "0",
        "shortcuts-TOTAL_FORMS": "0",
        "shortcuts-INITIAL_FORMS": "0",
    }
    for i, row in enumerate(scenarios):
        data |= {f"scenarios-{i}-{k}": v for k, v in {"description": "d", "instruction": "i", **row}.items()}
    for i, row in enumerate(faq):
        data |= {f"faq_entries-{i}-{k}": v for k, v in row.items()}
    return data


def test_changelist_shows_only_own_assistants(client_a, account_a, account_b):
    AssistantFactory(account=account_a, name="alpha-bot")
    AssistantFactory(account=account_b, name="bravo-bot")

    html = client_a.get("/admin/captain/assistant/").content.decode()

    assert "alpha-bot" in html
    assert "bravo-bot" not in html


def test_other_accounts_objects_are_not_reachable(client_a, account_b):
    assistant = AssistantFactory(account=account_b)
    for obj in (
        assistant,
        RunFactory(conversation__contact_inbox__inbox__account=account_b),
        CreditBalanceFactory(account=account_b),
    ):
        response = client_a.get(change_url(obj))
        assert response.status_code in (302, 404)
        assert response.status_code == 404 or response.url == "/admin/"


@pytest.mark.parametrize(
    "payload", ["{{ cycler.__init__.__globals__ }}", "{{ 9**99999999 }}", "{{ nope }}", "{{ 1/0 }}"]
)
def test_template_payload_in_instructions_is_rejected(client_a, account_a, payload):
    response = client_a.post(ADD_URL, new_assistant_data(account_a, instructions=payload))

    assert response.status_code == 200
    assert "instructions" in response.context["adminform"].form.errors
    assert not Assistant.objects.exists()


def test_template_payload_in_scenario_instruction_is_rejected(client_a, account_a):
    data = new_assistant_data(
        account_a, scenarios=[{"title": "Refunds", "instruction": "{{ ''.__class__.__mro__ }}"}]
    )

    response = client_a.post(ADD_URL, data)

    assert response.status_code == 200
    assert not Assistant.objects.exists()


def test_scenario_keys_derived_and_deduplicated_on_add(client_a, account_a):
    data = new_assistant_data(
        account_a,
        scenarios=[{"title": "Refunds & Returns", "tools": "faq_lookup"}, {"title": "Refunds & returns"}],
        faq=[{"question": "Shipping?", "answer": "3 days.", "enabled": "on"}],
    )

    response = client_a.post(ADD_URL, data)

    assert response.status_code == 302, response.context["inline_admin_formsets"][0].formset.errors
    assistant = Assistant.objects.get()
    assert assistant.account_id == account_a.pk
    assert list(assistant.scenarios.values_list("key", "tools")) == [
        ("refunds_returns", ["faq_lookup"]),
        ("refunds_returns_2", []),
    ]
    assert FaqEntry.objects.get().account_id == account_a.pk
    assert RoutingConfig.objects.get(assistant=assistant).default_mode == "semantic"


def test_scenario_key_is_read_only_on_edit(client_a, account_a):
    scenario = ScenarioFactory(assistant=AssistantFactory(account=account_a), title="Refunds", key="refunds")
    page = client_a.get(change_url(scenario.assistant))
    data = admin_form_data(page) | {"scenarios-0-key": "hijacked", "scenarios-0-title": "Money back"}

    response = client_a.post(change_url(scenario.assistant), data)

    assert response.status_code == 302
    scenario.refresh_from_db()
    assert (scenario.title, scenario.key) == ("Money back", "refunds")


def test_duplicate_scenario_key_is_a_form_error(client_a, account_a):
    existing = ScenarioFactory(assistant=AssistantFactory(account=account_a), key="refunds")
    page = client_a.get(change_url(existing.assistant))
    data = admin_form_data(page) | {
        "scenarios-TOTAL_FORMS": "2",
        "scenarios-1-title": "Other",
        "scenarios-1-key": "refunds",
        "scenarios-1-description": "d",
        "scenarios-1-instruction": "i",
    }

    response = client_a.post(change_url(existing.assistant), data)

    assert response.status_code == 200
    scenario_formset = response.context["inline_admin_formsets"][0].formset
    assert scenario_formset.errors[1]["key"] == ["This assistant already has a scenario with key 'refunds'."]
    assert Scenario.objects.count() == 1


def test_other_accounts_are_not_offered_for_a_new_assistant(client_a, account_b):
    response = client_a.post(ADD_URL, new_assistant_data(account_b))

    assert response.status_code == 200
    assert "account" in response.context["adminform"].form.errors
    assert not Assistant.objects.exists()


def test_ledger_and_runs_are_read_only(client_a, account_a):
    entry = CreditLedgerEntryFactory(message__conversation__contact_inbox__inbox__account=account_a)
    run = RunFactory(conversation__contact_inbox__inbox__account=account_a)

    for obj in (entry, run):
        assert client_a.get(change_url(obj)).status_code == 200  # viewable
        assert client_a.post(change_url(obj), {}).status_code == 403
    assert (
        client_a.post(f"/admin/captain/creditledgerentry/{entry.pk}/delete/", {"post": "yes"}).status_code
        == 403
    )


def test_account_admin_cannot_raise_own_credit_limit(client_a, account_a):
    balance = CreditBalanceFactory(account=account_a, limit=100)

    response = client_a.post(change_url(balance), {"limit": "1000000"})

    assert response.status_code == 403
    assert CreditBalance.objects.get(pk=balance.pk).limit == 100


# ---- model endpoints -----------------------------------------------------------------------------------------


def test_routing_inline_refuses_a_url_as_the_router_endpoint(client_a, account_a):
    """The admin's routing inline used to take any `router_base_url`, which then received the server's key."""
    assistant = AssistantFactory(account=account_a)
    routing = RoutingConfig.objects.create(assistant=assistant)
    data = admin_form_data(client_a.get(change_url(assistant)))
    prefix = next(k for k in data if k.endswith("-default_mode")).removesuffix("-default_mode")
    data[f"{prefix}-router_endpoint"] = "http://169.254.169.254/latest/"

    response = client_a.post(change_url(assistant), data)

    assert response.status_code == 200
    assert "no model endpoint named" in response.content.decode()
    routing.refresh_from_db()
    assert routing.router_endpoint == ""


def test_assistant_admin_refuses_a_model_the_server_does_not_offer(client_a, account_a):
    data = new_assistant_data(account_a) | {"model": "gpt-expensive"}
    response = client_a.post(ADD_URL, data)
    assert response.status_code == 200
    assert "is not offered on endpoint" in response.content.decode()
    assert not Assistant.objects.exists()


@pytest.mark.parametrize("base_url", ["http://169.254.169.254/", "http://10.1.2.3/v1", "file:///etc/passwd"])
def test_own_endpoint_admin_refuses_addresses_the_outbound_policy_refuses(client_a, account_a, base_url):
    response = client_a.post(
        "/admin/captain/modelendpoint/add/",
        {
            "account": account_a.pk,
            "name": "ours",
            "base_url": base_url,
            "model_names": "[]",
            "new_api_key": "k",
        },
    )
    assert response.status_code == 200
    assert not ModelEndpoint.objects.exists()


def test_own_endpoint_admin_stores_the_key_encrypted_and_never_shows_it(client_a, account_a):
    response = client_a.post(
        "/admin/captain/modelendpoint/add/",
        {
            "account": account_a.pk,
            "name": "ours",
            # Allowlisted in tests (the suite's model servers run there); no DNS lookup leaves the machine.
            "base_url": "http://127.0.0.1:9/v1",
            "model_names": '["m1"]',
            "new_api_key": "sk-admin-typed",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    endpoint = ModelEndpoint.objects.get()
    assert "sk-admin-typed" not in endpoint.api_key_encrypted
    assert secret_decrypt(endpoint.api_key_encrypted) == "sk-admin-typed"
    assert "sk-admin-typed" not in client_a.get(change_url(endpoint)).content.decode()
    assert client_a.get("/admin/captain/modelendpoint/?api_key_encrypted__startswith=g").status_code == 400


def test_reply_jobs_list_only_the_accounts_own_and_filter_by_status(client_a, account_a, account_b):
    from captain.answering.models import ReplyJob
    from tests.factories import MessageFactory

    mine = MessageFactory(conversation__contact_inbox__inbox__account=account_a, content="mine")
    theirs = MessageFactory(conversation__contact_inbox__inbox__account=account_b, content="theirs")
    for message in (mine, theirs):
        ReplyJob.objects.create(
            message=message, conversation=message.conversation, account=message.account, attempts=2
        )

    listed = client_a.get("/admin/captain/replyjob/?status__exact=pending").context["cl"].result_list
    assert [(job.message_id, job.attempts) for job in listed] == [(mine.pk, 2)]
    assert client_a.get("/admin/captain/replyjob/?status__exact=done").context["cl"].result_count == 0
    # The rows belong to the runs and the sweeper: nobody edits them here.
    assert client_a.get("/admin/captain/replyjob/add/").status_code == 403
