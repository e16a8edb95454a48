"""An object the view found and another request deleted before the service wrote to it (a contact merged away
between the two): the API answers 404 or 400 with the reason, never a 500, and stores nothing."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

import helpdesk.api.contact_notes
import helpdesk.api.contacts
from helpdesk.models import Contact, ContactNote
from tests.factories import ContactFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def gone(team, monkeypatch):
    """A contact the view's access check still returns (fetched a moment before) whose row is deleted."""
    contact = ContactFactory(account=team.account, name="Merged away")
    Contact.objects.filter(pk=contact.pk).delete()
    for module in (helpdesk.api.contacts, helpdesk.api.contact_notes):
        monkeypatch.setattr(module, "access_contact", lambda **_: contact)
    return contact


def client_of(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_editing_a_contact_deleted_meanwhile_is_a_404(team, gone):
    url = f"/api/v1/accounts/{team.account.pk}/contacts/{gone.pk}/"
    response = client_of(team.admin).patch(url, {"name": "New name"}, format="json")
    assert response.status_code == 404, response.content
    assert "deleted or merged meanwhile" in response.json()["detail"]


def test_a_note_on_a_contact_deleted_meanwhile_is_refused_with_the_reason(team, gone):
    url = f"/api/v1/accounts/{team.account.pk}/contacts/{gone.pk}/notes/"
    response = client_of(team.agent).post(url, {"content": "Calls after 6 pm."}, format="json")
    assert response.status_code == 400, response.content
    assert "merged into another or deleted" in str(response.json())
    assert not ContactNote.objects.exists()
