"""Contact notes edited and deleted on the contact's page and through the REST API (list, create, edit,
delete): the author or an administrator changes a note, a colleague gets a 403, another account's note is a 404,
and a bad text is named with nothing changed."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from rest_framework.test import APIClient

from helpdesk.models import Contact, ContactNote
from helpdesk.services.contact_notes import contact_note_create
from tests.factories import ContactFactory, UserFactory

pytestmark = pytest.mark.django_db


def api_as(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def notes_url(team, contact, note=None) -> str:
    base = f"/api/v1/accounts/{team.account.pk}/contacts/{contact.pk}/notes/"
    return f"{base}{note.pk}/" if note else base


def page(team, contact, note) -> str:
    return f"/app/accounts/{team.account.id}/contacts/{contact.id}/notes/{note.id}/"


@pytest.fixture
def note(team):
    contact = ContactFactory(account=team.account, name="Ann")
    return contact_note_create(contact=contact, author=team.agent, content="Prefers e-mail.")


def test_the_author_edits_and_deletes_on_the_page(agent_client, team, note):
    contact = note.contact
    response = agent_client.get(f"/app/accounts/{team.account.id}/contacts/{contact.id}/")
    assert f'action="{page(team, contact, note)}"' in response.content.decode()
    response = agent_client.post(page(team, contact, note), {"content": " Calls after 6 pm. "}, follow=True)
    assert "Note saved." in response.content.decode()
    note.refresh_from_db()
    assert note.content == "Calls after 6 pm."
    bad = agent_client.post(page(team, contact, note), {"content": "  "}, follow=True)
    assert "Note not saved: Write the note first." in bad.content.decode()
    note.refresh_from_db()
    assert note.content == "Calls after 6 pm."
    gone = agent_client.post(page(team, contact, note), {"action": "delete"}, follow=True)
    assert "Note deleted." in gone.content.decode()
    assert not ContactNote.objects.exists()


def test_a_colleague_cannot_change_it_an_administrator_can(client, team, note):
    colleague = UserFactory(username="carol")
    team.account.memberships.create(user=colleague, role="agent")
    client.force_login(colleague)
    contact = note.contact
    html = client.get(f"/app/accounts/{team.account.id}/contacts/{contact.id}/").content.decode()
    assert page(team, contact, note) not in html  # no edit form for someone else's note
    assert client.post(page(team, contact, note), {"content": "Mine now"}).status_code == 403
    assert client.post(page(team, contact, note), {"action": "delete"}).status_code == 403
    note.refresh_from_db()
    assert note.content == "Prefers e-mail."
    client.force_login(team.admin)
    client.post(page(team, contact, note), {"content": "Checked by the admin."})
    note.refresh_from_db()
    assert note.content == "Checked by the admin."


def test_another_accounts_note_is_a_404(agent_client, team, other_team):
    theirs = ContactFactory(account=other_team.account)
    their_note = contact_note_create(contact=theirs, author=other_team.admin, content="Secret")
    ours = ContactFactory(account=team.account)
    # Their note under our contact's path, and under their own account's path.
    assert agent_client.post(page(team, ours, their_note), {"action": "delete"}).status_code == 404
    url = f"/app/accounts/{other_team.account.id}/contacts/{theirs.id}/notes/{their_note.id}/"
    assert agent_client.post(url, {"action": "delete"}).status_code == 404
    assert api_as(team.agent).delete(notes_url(team, ours, their_note)).status_code == 404
    assert api_as(team.agent).get(notes_url(team, theirs)).status_code == 404
    assert ContactNote.objects.get().content == "Secret"


def test_api_lists_creates_edits_and_deletes(team, note):
    contact, client = note.contact, api_as(team.agent)
    created = client.post(notes_url(team, contact), {"content": "Second"}, format="json")
    assert created.status_code == 201
    assert (created.data["author"], created.data["content"], created.data["contact"]) == (
        "bob",
        "Second",
        contact.pk,
    )
    listed = client.get(notes_url(team, contact))
    assert [n["content"] for n in listed.data["results"]] == ["Second", "Prefers e-mail."]
    edited = client.patch(notes_url(team, contact, note), {"content": "Edited"}, format="json")
    assert (edited.status_code, edited.data["content"]) == (200, "Edited")
    assert client.delete(notes_url(team, contact, note)).status_code == 204
    assert list(ContactNote.objects.values_list("content", flat=True)) == ["Second"]


def test_api_refuses_bad_text_and_other_peoples_notes(team, note):
    contact = note.contact
    for bad in ({"content": "   "}, {"content": "x" * 5001}, {}):
        response = api_as(team.agent).post(notes_url(team, contact), bad, format="json")
        assert response.status_code == 400 and "content" in response.data
    response = api_as(team.agent).patch(notes_url(team, contact, note), {"content": ""}, format="json")
    assert response.status_code == 400 and "content" in response.data
    colleague = UserFactory(username="carol")
    team.account.memberships.create(user=colleague, role="agent")
    assert (
        api_as(colleague).patch(notes_url(team, contact, note), {"content": "x"}, format="json").status_code
        == 403
    )
    assert api_as(colleague).delete(notes_url(team, contact, note)).status_code == 403
    assert (
        api_as(team.admin).patch(notes_url(team, contact, note), {"content": "ok"}, format="json").status_code
        == 200
    )
    assert list(ContactNote.objects.values_list("content", flat=True)) == ["ok"]


def test_a_note_on_a_contact_merged_away_meanwhile_is_refused_not_a_server_error(team):
    # The API fetched the contact, then a merge deleted it before the note was written (CI's Schemathesis run
    # found the 500 this was: a foreign-key error at the insert).
    contact = ContactFactory(account=team.account, name="Gone")
    Contact.objects.filter(pk=contact.pk).delete()
    with pytest.raises(ValidationError, match="merged into another or deleted"):
        contact_note_create(contact=contact, author=team.agent, content="Prefers e-mail.")
    assert not ContactNote.objects.filter(contact_id=contact.pk).exists()
