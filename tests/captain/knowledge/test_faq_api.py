"""FAQ entries of an assistant over the REST API."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from captain.knowledge.models import FaqEntry
from helpdesk.models import Membership
from tests.factories import AssistantFactory, FaqEntryFactory, MembershipFactory

pytestmark = pytest.mark.django_db


def api_for(membership):
    client = APIClient()
    client.force_authenticate(membership.user)
    return client


def url(assistant, suffix=""):
    return f"/api/v1/captain/accounts/{assistant.account_id}/assistants/{assistant.id}/faq/{suffix}"


@pytest.fixture
def admin():
    return MembershipFactory(role=Membership.Role.ADMIN)


def test_admin_creates_entry_in_assistants_account(admin):
    assistant = AssistantFactory(account=admin.account)

    response = api_for(admin).post(
        url(assistant), {"question": "Shipping?", "answer": "3 days."}, format="json"
    )

    assert response.status_code == 201
    entry = FaqEntry.objects.get(pk=response.data["id"])
    assert (entry.account_id, entry.assistant_id, entry.enabled) == (admin.account_id, assistant.id, True)


def test_admin_updates_and_deletes_entry(admin):
    entry = FaqEntryFactory(assistant=AssistantFactory(account=admin.account))
    api = api_for(admin)

    patched = api.patch(url(entry.assistant, f"{entry.id}/"), {"enabled": False}, format="json")
    entry.refresh_from_db()
    assert patched.status_code == 200
    assert entry.enabled is False

    assert api.delete(url(entry.assistant, f"{entry.id}/")).status_code == 204
    assert not FaqEntry.objects.exists()


def test_list_shows_only_this_assistants_entries(admin):
    entry = FaqEntryFactory(assistant=AssistantFactory(account=admin.account))
    FaqEntryFactory(assistant=AssistantFactory(account=admin.account))

    response = api_for(admin).get(url(entry.assistant))

    assert [row["id"] for row in response.data["results"]] == [entry.id]


def test_entry_of_another_assistant_answers_404(admin):
    entry = FaqEntryFactory(assistant=AssistantFactory(account=admin.account))
    sibling = AssistantFactory(account=admin.account)

    assert api_for(admin).get(url(sibling, f"{entry.id}/")).status_code == 404


def test_agent_reads_but_cannot_write(admin):
    entry = FaqEntryFactory(assistant=AssistantFactory(account=admin.account))
    agent = MembershipFactory(account=admin.account, role=Membership.Role.AGENT)
    api = api_for(agent)

    assert api.get(url(entry.assistant, f"{entry.id}/")).status_code == 200
    assert api.post(url(entry.assistant), {"question": "q", "answer": "a"}, format="json").status_code == 403
    assert (
        api.put(
            url(entry.assistant, f"{entry.id}/"), {"question": "q", "answer": "a"}, format="json"
        ).status_code
        == 403
    )
    assert api.delete(url(entry.assistant, f"{entry.id}/")).status_code == 403
    assert FaqEntry.objects.count() == 1


def test_question_and_answer_required(admin):
    assistant = AssistantFactory(account=admin.account)

    response = api_for(admin).post(url(assistant), {"question": ""}, format="json")

    assert response.status_code == 400
    assert set(response.data) == {"question", "answer"}
