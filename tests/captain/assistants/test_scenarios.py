"""captain.assistants.services.scenarios: keys derived once and fixed, tools and templates checked, one field list."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from captain.assistants.api.scenarios import ScenarioInputSerializer, ScenarioOutputSerializer
from captain.assistants.forms import ScenarioAdminForm
from captain.assistants.models import Scenario
from captain.assistants.services.scenarios import (
    SCENARIO_FIELDS,
    scenario_create,
    scenario_delete,
    scenario_update,
)
from captain.routing.models import RoutingExample
from tests.factories import AssistantFactory, ScenarioFactory

pytestmark = pytest.mark.django_db

FIELDS = {"description": "Money back", "instruction": "Help."}


def test_a_key_is_derived_from_the_title_and_made_unique():
    assistant = AssistantFactory()

    first = scenario_create(assistant=assistant, title="Refunds & Returns", **FIELDS)
    second = scenario_create(assistant=assistant, title="Refunds & returns", **FIELDS)
    third = scenario_create(assistant=assistant, title="退款", **FIELDS)

    assert [first.key, second.key, third.key] == ["refunds_returns", "refunds_returns_2", "scenario_3"]


def test_a_given_key_already_used_by_the_assistant_is_refused():
    existing = ScenarioFactory(key="refunds")

    with pytest.raises(ValidationError) as excinfo:
        scenario_create(assistant=existing.assistant, key="refunds", title="Other", **FIELDS)

    assert excinfo.value.message_dict == {
        "key": ["This assistant already has a scenario with key 'refunds'."]
    }
    assert Scenario.objects.count() == 1


def test_the_same_key_on_another_assistant_is_fine():
    ScenarioFactory(key="refunds")

    assert scenario_create(assistant=AssistantFactory(), key="refunds", title="R", **FIELDS).key == "refunds"


def test_the_key_is_fixed_at_creation():
    scenario = ScenarioFactory(key="refunds", title="Refunds")

    scenario_update(scenario=scenario, key="refunds", title="Money back")
    with pytest.raises(ValidationError) as excinfo:
        scenario_update(scenario=scenario, key="hijacked")

    scenario.refresh_from_db()
    assert (scenario.key, scenario.title) == ("refunds", "Money back")
    assert excinfo.value.message_dict == {
        "key": ["The key is fixed at creation ('refunds') and cannot be changed."]
    }


def test_unknown_tools_are_refused_and_duplicates_dropped():
    assistant = AssistantFactory()

    with pytest.raises(ValidationError) as excinfo:
        scenario_create(assistant=assistant, title="R", tools=["faq_lookup", "rm_rf"], **FIELDS)
    created = scenario_create(assistant=assistant, title="R", tools=["faq_lookup", "faq_lookup"], **FIELDS)

    assert excinfo.value.message_dict["tools"][0].startswith("Unknown tool(s): rm_rf. Allowed:")
    assert created.tools == ["faq_lookup"]


def test_a_template_that_fails_in_the_sandbox_is_refused_on_update():
    scenario = ScenarioFactory(instruction="Help.")

    with pytest.raises(ValidationError) as excinfo:
        scenario_update(scenario=scenario, instruction="{{ ''.__class__.__mro__ }}")

    assert list(excinfo.value.message_dict) == ["instruction"]
    scenario.refresh_from_db()
    assert scenario.instruction == "Help."


def test_delete():
    scenario = ScenarioFactory()

    scenario_delete(scenario=scenario)

    assert not Scenario.objects.exists()


def test_delete_forgets_the_examples_proposed_for_the_node():
    """A scenario created later with the same key must not inherit its drafts or accepted corrections."""
    scenario = ScenarioFactory(key="refunds")
    other = ScenarioFactory(assistant=scenario.assistant, key="shipping")
    for key, text in [("refunds", "money back please"), ("shipping", "where is my parcel")]:
        RoutingExample.objects.create(
            account=scenario.assistant.account,
            assistant=scenario.assistant,
            key=key,
            text=text,
            source=RoutingExample.Source.CORRECTION,
            status=RoutingExample.Status.ACCEPTED,
        )
    scenario_delete(scenario=scenario)
    assert list(RoutingExample.objects.values_list("key", flat=True)) == [other.key]


def test_the_api_and_the_admin_edit_the_services_field_list():
    # The handoff team is the one relation: the API writes its id, shows it and the admin picks it by name.
    assert ScenarioOutputSerializer.Meta.fields == ["id", *SCENARIO_FIELDS, "handoff_team", "created_at"]
    assert list(ScenarioInputSerializer().fields) == [*SCENARIO_FIELDS, "handoff_team_id"]
    assert ScenarioAdminForm.Meta.fields == [*SCENARIO_FIELDS, "handoff_team"]
