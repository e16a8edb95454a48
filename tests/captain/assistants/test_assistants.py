"""captain.assistants.services.assistants: the one place assistants are written (API, admin and demo commands call it)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from captain.admin import AssistantAdmin
from captain.assistants.api.assistants import AssistantInputSerializer, AssistantOutputSerializer
from captain.assistants.forms import AssistantAdminForm
from captain.assistants.models import Assistant, AssistantInbox
from captain.assistants.services.assistants import (
    ASSISTANT_FIELDS,
    assistant_create,
    assistant_delete,
    assistant_inbox_take_over,
    assistant_update,
)
from captain.routing.models import RoutingConfig
from helpdesk.models import Inbox
from tests.factories import AccountFactory, AssistantFactory, AssistantInboxFactory, InboxFactory

pytestmark = pytest.mark.django_db


def field_errors(excinfo: pytest.ExceptionInfo[ValidationError]) -> dict[str, list[str]]:
    return excinfo.value.message_dict


def test_create_serves_the_inboxes_and_turns_graph_routing_on():
    account = AccountFactory()
    inbox = InboxFactory(account=account)

    assistant = assistant_create(
        account_id=account.id, inbox_ids=[inbox.id, inbox.id], name="Captain", max_turns=4, guardrails=["No"]
    )

    assert (assistant.account_id, assistant.name, assistant.max_turns, assistant.guardrails) == (
        account.id,
        "Captain",
        4,
        ["No"],
    )
    assert list(AssistantInbox.objects.values_list("assistant_id", "inbox_id")) == [(assistant.id, inbox.id)]
    assert RoutingConfig.objects.get(assistant=assistant).default_mode == "semantic"


def test_update_writes_only_the_given_fields_and_keeps_inboxes_unless_given():
    link = AssistantInboxFactory(assistant=AssistantFactory(product_name="Acme", temperature=0.2))
    assistant = link.assistant

    assistant_update(assistant=assistant, name="Renamed")

    assistant.refresh_from_db()
    assert (assistant.name, assistant.product_name, assistant.temperature) == ("Renamed", "Acme", 0.2)
    assert AssistantInbox.objects.filter(assistant=assistant).count() == 1

    assistant_update(assistant=assistant, inbox_ids=[])

    assert not AssistantInbox.objects.filter(assistant=assistant).exists()


@pytest.mark.parametrize("write", ["create", "update"])
def test_a_template_that_fails_in_the_sandbox_is_a_field_error_and_nothing_is_stored(write):
    assistant = AssistantFactory(instructions="Be kind.")
    payload = "{{ cycler.__init__.__globals__ }}"

    with pytest.raises(ValidationError) as excinfo:
        if write == "create":
            assistant_create(account_id=assistant.account_id, name="B", instructions=payload)
        else:
            assistant_update(assistant=assistant, instructions=payload)

    assert list(field_errors(excinfo)) == ["instructions"]
    assert field_errors(excinfo)["instructions"][0].startswith("Template error:")
    assistant.refresh_from_db()
    assert assistant.instructions == "Be kind."
    assert Assistant.objects.count() == 1


def test_max_turns_over_the_servers_cap_is_refused(settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "MAX_TURNS_CAP": 8}
    account = AccountFactory()

    with pytest.raises(ValidationError) as excinfo:
        assistant_create(account_id=account.id, name="Busy", max_turns=9)

    assert field_errors(excinfo) == {"max_turns": ["At most 8 (the server's MAX_TURNS_CAP)."]}
    assert not Assistant.objects.exists()


def test_a_model_the_endpoint_does_not_offer_is_refused_and_the_stored_endpoint_fills_in():
    assistant = AssistantFactory()

    with pytest.raises(ValidationError) as excinfo:
        assistant_update(assistant=assistant, model="gpt-9-ultra")

    assert list(field_errors(excinfo)) == ["model"]
    assert "gpt-9-ultra" in field_errors(excinfo)["model"][0]


def test_an_inbox_served_by_another_assistant_is_refused_naming_both():
    link = AssistantInboxFactory(inbox__name="Website")
    other = AssistantFactory(account=link.assistant.account, name="Second")

    with pytest.raises(ValidationError) as excinfo:
        assistant_update(assistant=other, inbox_ids=[link.inbox_id])

    assert field_errors(excinfo) == {
        "inbox_ids": [
            f"Website (#{link.inbox_id}) is served by {link.assistant.name}. Disconnect it there first."
        ]
    }
    assert AssistantInbox.objects.get().assistant_id == link.assistant_id


def test_another_accounts_inbox_does_not_exist_for_this_account():
    foreign = InboxFactory()
    account = AccountFactory()

    with pytest.raises(ValidationError) as excinfo:
        assistant_create(account_id=account.id, name="A", inbox_ids=[foreign.id])

    assert field_errors(excinfo) == {"inbox_ids": [f'Invalid pk "{foreign.id}" - object does not exist.']}
    assert not Assistant.objects.exists()


def test_an_unknown_field_is_a_programming_error_not_a_silent_write():
    with pytest.raises(TypeError, match="account_id"):
        assistant_update(assistant=AssistantFactory(), account_id=123)  # type: ignore[call-arg]


def test_take_over_moves_an_inbox_between_the_accounts_assistants_only():
    link = AssistantInboxFactory()
    successor = AssistantFactory(account=link.assistant.account)

    assistant_inbox_take_over(assistant=successor, inbox=link.inbox)

    assert list(AssistantInbox.objects.values_list("assistant_id", flat=True)) == [successor.id]
    with pytest.raises(ValidationError):
        assistant_inbox_take_over(assistant=AssistantFactory(), inbox=link.inbox)


def test_delete_keeps_the_inbox_unserved():
    link = AssistantInboxFactory()

    assistant_delete(assistant=link.assistant)

    assert not Assistant.objects.exists()
    assert not AssistantInbox.objects.exists()
    assert Inbox.objects.filter(pk=link.inbox_id).exists()


def test_the_api_and_the_admin_edit_the_services_field_list():
    """One field list: a field added to the service appears in the API and the admin without a second edit."""
    assert AssistantInputSerializer.Meta.fields == [*ASSISTANT_FIELDS, "inbox_ids"]
    assert AssistantOutputSerializer.Meta.fields == ["id", *ASSISTANT_FIELDS, "inbox_ids", "created_at"]
    assert AssistantAdminForm.Meta.fields == ["account", *ASSISTANT_FIELDS]
    assert AssistantAdmin.form is AssistantAdminForm
