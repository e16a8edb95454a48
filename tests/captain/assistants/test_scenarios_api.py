"""Scenarios: keys derived once from the title, unique per assistant, read-only; tools, templates checked."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from captain.assistants.models import MAX_SCENARIO_KEY_LENGTH, Scenario
from helpdesk.models import Membership, Team
from tests.factories import AccountFactory, AssistantFactory, MembershipFactory, ScenarioFactory

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
    return f"/api/v1/captain/accounts/{assistant.account_id}/assistants/{assistant.id}/scenarios/{suffix}"


def body(**overrides):
    return {
        "title": "Refunds & Returns",
        "description": "Refund questions",
        "instruction": "Help.",
        **overrides,
    }


def test_key_derived_from_title(api, assistant):
    response = api.post(url(assistant), body(tools=["faq_lookup"]), format="json")

    assert response.status_code == 201, response.data
    assert response.data["key"] == "refunds_returns"
    assert response.data["tools"] == ["faq_lookup"]


def test_derived_key_deduplicated(api, assistant):
    keys = [api.post(url(assistant), body(), format="json").data["key"] for _ in range(3)]

    assert keys == ["refunds_returns", "refunds_returns_2", "refunds_returns_3"]


def test_derived_key_trimmed_to_limit(api, assistant):
    response = api.post(url(assistant), body(title="Very long title " * 10), format="json")

    assert response.status_code == 201
    key = response.data["key"]
    assert len(key) <= MAX_SCENARIO_KEY_LENGTH
    assert key.startswith("very_long_title_very_long_title")
    assert not key.endswith("_")


def test_derived_key_of_long_title_deduplicated_within_limit(api, assistant):
    first = api.post(url(assistant), body(title="a" * 80), format="json").data["key"]
    second = api.post(url(assistant), body(title="a" * 80), format="json").data["key"]

    assert first == "a" * MAX_SCENARIO_KEY_LENGTH
    assert second == "a" * (MAX_SCENARIO_KEY_LENGTH - 2) + "_2"


def test_non_ascii_title_gets_numbered_key(api, assistant):
    response = api.post(url(assistant), body(title="Возврат денег"), format="json")

    assert response.status_code == 201
    assert response.data["key"] == "scenario_1"


def test_explicit_key_over_limit_rejected(api, assistant):
    response = api.post(url(assistant), body(key="k" * (MAX_SCENARIO_KEY_LENGTH + 1)), format="json")

    assert response.status_code == 400
    assert "key" in response.data
    assert not Scenario.objects.exists()


def test_explicit_key_at_limit_accepted(api, assistant):
    response = api.post(url(assistant), body(key="k" * MAX_SCENARIO_KEY_LENGTH), format="json")

    assert response.status_code == 201


@pytest.mark.parametrize("key", ["Refunds", "with space", "assistant", "ключ"])
def test_invalid_or_reserved_key_rejected(api, assistant, key):
    response = api.post(url(assistant), body(key=key), format="json")

    assert response.status_code == 400
    assert "key" in response.data


def test_duplicate_key_rejected_with_clear_message(api, assistant):
    ScenarioFactory(assistant=assistant, key="refunds")

    response = api.post(url(assistant), body(key="refunds"), format="json")

    assert response.status_code == 400
    assert "already has a scenario with key 'refunds'" in str(response.data["key"])
    assert Scenario.objects.count() == 1


def test_same_key_allowed_on_another_assistant(api, assistant):
    ScenarioFactory(assistant=AssistantFactory(account=assistant.account), key="refunds")

    assert api.post(url(assistant), body(key="refunds"), format="json").status_code == 201


def test_rename_keeps_key(api, assistant):
    scenario = ScenarioFactory(assistant=assistant, title="Refunds", key="refunds")

    response = api.patch(url(assistant, f"{scenario.id}/"), {"title": "Money back"}, format="json")

    assert response.status_code == 200
    scenario.refresh_from_db()
    assert (scenario.title, scenario.key) == ("Money back", "refunds")


def test_key_is_read_only_after_creation(api, assistant):
    scenario = ScenarioFactory(assistant=assistant, key="refunds")

    response = api.patch(url(assistant, f"{scenario.id}/"), {"key": "money_back"}, format="json")

    assert response.status_code == 400
    assert "fixed at creation" in str(response.data["key"])
    scenario.refresh_from_db()
    assert scenario.key == "refunds"


def test_full_update_with_unchanged_key_is_fine(api, assistant):
    scenario = ScenarioFactory(assistant=assistant, key="refunds")

    response = api.put(url(assistant, f"{scenario.id}/"), body(key="refunds", enabled=False), format="json")

    assert response.status_code == 200
    assert response.data["enabled"] is False


@pytest.mark.parametrize("tools", [["rm_rf"], ["faq_lookup", "shell"], ["handoff_to_human"]])
def test_unknown_tool_rejected(api, assistant, tools):
    response = api.post(url(assistant), body(tools=tools), format="json")

    assert response.status_code == 400
    assert "tools" in response.data
    assert not Scenario.objects.exists()


@pytest.mark.parametrize(
    "payload", ["{{ cycler.__init__.__globals__ }}", "{{ 9**99999999 }}", "{{ nope }}", "{{ ''.__class__ }}"]
)
def test_template_payload_in_instruction_rejected(api, assistant, payload):
    response = api.post(url(assistant), body(instruction=payload), format="json")

    assert response.status_code == 400
    assert "instruction" in response.data
    assert not Scenario.objects.exists()


def test_template_variables_allowed(api, assistant):
    response = api.post(
        url(assistant),
        body(instruction="Call them {{ contact.name }} about {{ assistant.product_name }}."),
        format="json",
    )

    assert response.status_code == 201


def test_agent_reads_but_cannot_write(admin, assistant):
    agent = MembershipFactory(account=admin.account, role=Membership.Role.AGENT)
    scenario = ScenarioFactory(assistant=assistant)
    api = APIClient()
    api.force_authenticate(agent.user)

    assert api.get(url(assistant)).status_code == 200
    assert api.post(url(assistant), body(), format="json").status_code == 403
    assert api.patch(url(assistant, f"{scenario.id}/"), {"title": "x"}, format="json").status_code == 403
    assert api.delete(url(assistant, f"{scenario.id}/")).status_code == 403
    assert Scenario.objects.count() == 1


def test_delete_scenario(api, assistant):
    scenario = ScenarioFactory(assistant=assistant)

    assert api.delete(url(assistant, f"{scenario.id}/")).status_code == 204
    assert not Scenario.objects.exists()


def test_handoff_team_is_set_cleared_and_limited_to_the_account(api, assistant):
    team = Team.objects.create(account=assistant.account, name="Billing")
    foreign = Team.objects.create(account=AccountFactory(), name="Theirs")
    created = api.post(url(assistant), body(handoff_team_id=team.pk), format="json")
    assert created.status_code == 201, created.content
    assert created.json()["handoff_team"] == team.pk
    scenario_url = url(assistant, f"{created.json()['id']}/")

    refused = api.patch(scenario_url, {"handoff_team_id": foreign.pk}, format="json")
    assert refused.status_code == 400
    assert "No such team in this account." in str(refused.json())
    assert Scenario.objects.get(pk=created.json()["id"]).handoff_team_id == team.pk

    cleared = api.patch(scenario_url, {"handoff_team_id": None}, format="json")
    assert cleared.status_code == 200
    assert cleared.json()["handoff_team"] is None
