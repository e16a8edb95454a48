"""Assistants over the REST API: admins write, agents read, inboxes stay in the account, templates checked."""

from __future__ import annotations

import time

import pytest
from rest_framework.test import APIClient

from captain.assistants.models import Assistant, AssistantInbox
from captain.routing.models import RoutingConfig
from helpdesk.models import Membership
from tests.factories import AssistantFactory, AssistantInboxFactory, InboxFactory, MembershipFactory

pytestmark = pytest.mark.django_db

SSTI_PAYLOADS = [
    "{{ cycler.__init__.__globals__ }}",
    "{{ cycler.__init__.__globals__.os.popen('touch /tmp/pwned').read() }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ self._TemplateReference__context }}",
    "{{ 9**99999999 }}",
    "{{ 'x' * 999999999 }}",
    "{{ nope }}",
    "{% for x in %}",
    "{{ 1/0 }}",
]


def api_for(membership):
    api = APIClient()
    api.force_authenticate(membership.user)
    return api


@pytest.fixture
def admin():
    return MembershipFactory(role=Membership.Role.ADMIN)


def url(account_id, suffix=""):
    return f"/api/v1/captain/accounts/{account_id}/assistants/{suffix}"


def test_admin_creates_assistant_with_inboxes(admin):
    inbox = InboxFactory(account=admin.account)

    response = api_for(admin).post(
        url(admin.account_id),
        {"name": "Captain", "instructions": "Greet {{ contact.name }}.", "inbox_ids": [inbox.id]},
        format="json",
    )

    assert response.status_code == 201, response.data
    assistant = Assistant.objects.get(pk=response.data["id"])
    assert assistant.account_id == admin.account_id
    assert response.data["inbox_ids"] == [inbox.id]
    assert AssistantInbox.objects.filter(assistant=assistant, inbox=inbox).exists()
    # Graph routing is on by default for a new assistant: the semantic router over the star.
    config = RoutingConfig.objects.get(assistant=assistant)
    assert config.default_mode == "semantic" and config.star


def test_agent_may_read_but_not_write(admin):
    agent = MembershipFactory(account=admin.account, role=Membership.Role.AGENT)
    assistant = AssistantFactory(account=admin.account)
    api = api_for(agent)

    assert api.get(url(admin.account_id)).status_code == 200
    assert api.get(url(admin.account_id, f"{assistant.id}/")).status_code == 200
    assert api.post(url(admin.account_id), {"name": "Mine"}, format="json").status_code == 403
    assert (
        api.patch(url(admin.account_id, f"{assistant.id}/"), {"name": "X"}, format="json").status_code == 403
    )
    assert api.delete(url(admin.account_id, f"{assistant.id}/")).status_code == 403
    assistant.refresh_from_db()
    assert assistant.name == "Captain"
    assert Assistant.objects.count() == 1


def test_inbox_of_another_account_cannot_be_linked(admin):
    foreign_inbox = InboxFactory()

    response = api_for(admin).post(
        url(admin.account_id), {"name": "Captain", "inbox_ids": [foreign_inbox.id]}, format="json"
    )

    assert response.status_code == 400
    assert "inbox_ids" in response.data
    assert not Assistant.objects.exists()
    assert not AssistantInbox.objects.exists()


def test_inbox_served_by_another_assistant_is_rejected(admin):
    link = AssistantInboxFactory(assistant=AssistantFactory(account=admin.account))

    response = api_for(admin).post(
        url(admin.account_id), {"name": "Second", "inbox_ids": [link.inbox_id]}, format="json"
    )

    assert response.status_code == 400
    assert "is served by" in str(response.data["inbox_ids"])
    assert Assistant.objects.count() == 1


def test_update_replaces_inbox_links(admin):
    link = AssistantInboxFactory(assistant=AssistantFactory(account=admin.account))
    other = InboxFactory(account=admin.account)

    response = api_for(admin).patch(
        url(admin.account_id, f"{link.assistant_id}/"), {"inbox_ids": [other.id]}, format="json"
    )

    assert response.status_code == 200
    assert response.data["inbox_ids"] == [other.id]
    assert list(AssistantInbox.objects.values_list("inbox_id", flat=True)) == [other.id]


def test_patch_without_inbox_ids_keeps_links(admin):
    link = AssistantInboxFactory(assistant=AssistantFactory(account=admin.account))

    response = api_for(admin).patch(
        url(admin.account_id, f"{link.assistant_id}/"), {"name": "New"}, format="json"
    )

    assert response.status_code == 200
    assert response.data["name"] == "New"
    assert response.data["inbox_ids"] == [link.inbox_id]


def test_delete_assistant(admin):
    assistant = AssistantFactory(account=admin.account)

    response = api_for(admin).delete(url(admin.account_id, f"{assistant.id}/"))

    assert response.status_code == 204
    assert not Assistant.objects.exists()


@pytest.mark.parametrize("payload", SSTI_PAYLOADS)
def test_template_payloads_in_instructions_are_rejected(admin, payload):
    started = time.monotonic()

    response = api_for(admin).post(
        url(admin.account_id), {"name": "Evil", "instructions": payload}, format="json"
    )

    assert response.status_code == 400
    assert "instructions" in response.data
    assert "Template error" in str(response.data["instructions"])
    assert time.monotonic() - started < 5  # the bounded sandbox refused it, it did not compute it
    assert not Assistant.objects.exists()


def test_template_payload_rejected_on_update_too(admin):
    assistant = AssistantFactory(account=admin.account, instructions="Be kind.")

    response = api_for(admin).patch(
        url(admin.account_id, f"{assistant.id}/"),
        {"instructions": "{{ cycler.__init__.__globals__ }}"},
        format="json",
    )

    assert response.status_code == 400
    assistant.refresh_from_db()
    assert assistant.instructions == "Be kind."


def test_max_turns_capped(admin, settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "MAX_TURNS_CAP": 8}

    response = api_for(admin).post(url(admin.account_id), {"name": "Busy", "max_turns": 9}, format="json")

    assert response.status_code == 400
    assert "max_turns" in response.data
