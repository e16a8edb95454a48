"""Database rows -> runtime team: Chatwoot's star topology with explicit allowlists."""

import pytest

from captain.assistants.services.agents import build_team
from tests.factories import AssistantFactory, ScenarioFactory

pytestmark = pytest.mark.django_db


def test_triage_gets_one_handoff_per_enabled_scenario_and_specialists_hand_back():
    assistant = AssistantFactory()
    ScenarioFactory(assistant=assistant, key="refunds", tools=["faq_lookup", "add_label"])
    ScenarioFactory(assistant=assistant, key="shipping", tools=[])
    ScenarioFactory(assistant=assistant, key="disabled_one", enabled=False)
    team = build_team(assistant)
    assert set(team) == {"assistant", "refunds", "shipping"}
    assert [h.tool_name for h in team["assistant"].handoffs] == ["handoff_to_refunds", "handoff_to_shipping"]
    assert [t.name for t in team["assistant"].tools] == ["faq_lookup", "handoff_to_human"]
    assert [h.tool_name for h in team["refunds"].handoffs] == ["handoff_to_assistant"]
    assert [t.name for t in team["refunds"].tools] == ["handoff_to_human", "faq_lookup", "add_label"]
    # Allowlist: a scenario without faq_lookup does not get it, but can always escalate to people.
    assert [t.name for t in team["shipping"].tools] == ["handoff_to_human"]
    assert "handoff_to_refunds" in team["assistant"].instructions


def test_model_defaults_to_server_setting(settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "DEFAULT_MODEL": "my-model"}
    assert build_team(AssistantFactory(model=""))["assistant"].model == "my-model"
    assert build_team(AssistantFactory(model="gpt-x"))["assistant"].model == "gpt-x"
