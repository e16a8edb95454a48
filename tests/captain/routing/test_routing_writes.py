"""captain.routing.services.routing's small writes (the demo commands use them): checked like the whole-graph PUT."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from captain.routing.models import RoutingConfig, RoutingNode
from captain.routing.services.routing import routing_config_update, routing_node_examples_set
from tests.factories import AssistantFactory, ScenarioFactory

pytestmark = pytest.mark.django_db


def test_config_update_turns_routing_on_with_a_known_mode_only():
    assistant = AssistantFactory()

    routing_config_update(assistant=assistant, default_mode="tool")
    with pytest.raises(ValidationError) as excinfo:
        routing_config_update(assistant=assistant, default_mode="telepathy")

    assert RoutingConfig.objects.get(assistant=assistant).default_mode == "tool"
    assert list(excinfo.value.message_dict) == ["default_mode"]


def test_node_examples_only_for_the_assistants_own_enabled_nodes():
    scenario = ScenarioFactory(key="refunds")
    ScenarioFactory(key="shipping", enabled=False, assistant=scenario.assistant)

    routing_node_examples_set(assistant=scenario.assistant, key="refunds", examples=["money back"])
    routing_node_examples_set(assistant=scenario.assistant, key="refunds", examples=["refund please"])
    with pytest.raises(ValidationError) as disabled:
        routing_node_examples_set(assistant=scenario.assistant, key="shipping", examples=["where"])
    with pytest.raises(ValidationError) as unknown:
        routing_node_examples_set(assistant=scenario.assistant, key="nope", examples=["x"])

    assert list(RoutingNode.objects.values_list("key", "examples")) == [("refunds", ["refund please"])]
    assert disabled.value.message_dict == {"key": ["node: scenario 'shipping' is disabled"]}
    assert unknown.value.message_dict == {"key": ["node: unknown node 'nope'"]}
