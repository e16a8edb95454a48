"""A PATCH body is documented with every field optional, so `{}` is a valid partial update: it changes nothing
and answers 200 with the current object, on every PATCH operation of the API (tests/support/openapi.py checks
the answer against the schema)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from captain.actions.models import CustomTool, Shortcut
from captain.assistants.models import ModelEndpoint
from captain.evaluation.models import EvalSet
from captain.memory.models import MemoryVariable
from captain.routing.models import RoutingExample
from helpdesk.models import (
    AutomationRule,
    CannedResponse,
    ContactNote,
    CustomAttributeDefinition,
    Membership,
    Team,
    WebhookEndpoint,
)
from tests.factories import (
    AssistantFactory,
    AssistantInboxFactory,
    ConversationFactory,
    FaqEntryFactory,
    MembershipFactory,
    ScenarioFactory,
)
from tests.support.openapi import api_schema, assert_documented, operation, schema_errors

pytestmark = pytest.mark.django_db

# An update checks URLs against the outbound policy, which resolves host names; the tests allowlist 127.0.0.1
# (tests/conftest.py) and nothing listens on the discard port.
LOOPBACK = "http://127.0.0.1:9"


@pytest.fixture
def admin():
    return MembershipFactory(role=Membership.Role.ADMIN)


@pytest.fixture
def ids(admin) -> dict[str, int]:
    """One row of each kind a PATCH operation changes, all in the admin's account."""
    account = admin.account
    assistant = AssistantFactory(account=account)
    conversation = ConversationFactory(contact_inbox__inbox=AssistantInboxFactory(assistant=assistant).inbox)
    MemoryVariable.objects.create(assistant=assistant, name="city", description="The city.", default="Berlin")
    return {
        "account_id": account.pk,
        "assistant_id": assistant.pk,
        "conversation_id": conversation.pk,
        "contact_id": conversation.contact_id,
        "definition_id": CustomAttributeDefinition.objects.create(
            account=account, applies_to="contact", key="plan", label="Plan"
        ).pk,
        "canned_id": CannedResponse.objects.create(account=account, short_code="hi", content="Hello!").pk,
        "team_id": Team.objects.create(account=account, name="Support").pk,
        "faq_entry_id": FaqEntryFactory(assistant=assistant).pk,
        "variable_id": assistant.memory_variables.get().pk,
        "example_id": RoutingExample.objects.create(
            account=account,
            assistant=assistant,
            key="refunds",
            text="Money back?",
            source=RoutingExample.Source.DRAFTED,
            status=RoutingExample.Status.SUGGESTED,
        ).pk,
        "scenario_id": ScenarioFactory(assistant=assistant, key="refunds").pk,
        "shortcut_id": Shortcut.objects.create(
            assistant=assistant,
            command="hello",
            description="Say hello",
            action=Shortcut.Action.MESSAGE,
            message_template="Hello!",
        ).pk,
        "tool_id": CustomTool.objects.create(
            account=account, name="get_order", description="Look up an order.", url_template=f"{LOOPBACK}/o"
        ).pk,
        "endpoint_id": ModelEndpoint.objects.create(
            account=account, name="ours", base_url=f"{LOOPBACK}/v1"
        ).pk,
        "webhook_id": WebhookEndpoint.objects.create(
            account=account,
            name="CRM",
            url=f"{LOOPBACK}/hooks",
            events=["message_created"],
            secret_encrypted="x",
        ).pk,
        "set_id": EvalSet.objects.create(account=account, assistant=assistant, name="Launch check").pk,
        "rule_id": AutomationRule.objects.create(
            account=account, name="Refunds", event="message_created", actions=[{"kind": "resolve"}]
        ).pk,
        "note_id": ContactNote.objects.create(
            account=account, contact_id=conversation.contact_id, author=admin.user, content="Prefers e-mail."
        ).pk,
    }


def patch_paths() -> list[str]:
    return [path for path, item in api_schema()["paths"].items() if "patch" in item]


@pytest.mark.parametrize("path", patch_paths())
def test_an_empty_patch_is_documented_as_a_valid_body(path):
    body = operation(path, "patch")["requestBody"]["content"]["application/json"]["schema"]

    assert schema_errors(body, {}) == []


@pytest.mark.parametrize("path", patch_paths())
def test_an_empty_patch_changes_nothing_and_answers_the_current_object(admin, ids, path):
    api = APIClient()
    api.force_authenticate(admin.user)
    url = path.format(**ids)
    before = api.get(url).json()

    response = api.patch(url, {}, format="json")

    assert response.status_code == 200, response.json()
    assert_documented(response, path=path, method="patch")
    assert response.json() == before
    assert api.get(url).json() == before
