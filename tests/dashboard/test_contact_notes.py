"""Notes on a contact: any member adds one on the contact's page and reads the latest first with its author; an
empty or too long note is refused and nothing is stored; another account's contact is a 404 and never gets one."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from helpdesk.models import ContactNote
from helpdesk.selectors.contacts import contact_notes
from helpdesk.services.contact_notes import NOTE_MAX_CHARS, contact_note_create
from tests.factories import ContactFactory

pytestmark = pytest.mark.django_db


def page(team, contact, suffix: str = "") -> str:
    return f"/app/accounts/{team.account.id}/contacts/{contact.id}/{suffix}"


def test_the_service_takes_the_contacts_account_and_refuses_empty_or_long_notes(team):
    contact = ContactFactory(account=team.account)
    note = contact_note_create(contact=contact, author=team.agent, content="  Prefers e-mail.  ")
    assert (note.account_id, note.content, note.author_id) == (
        team.account.id,
        "Prefers e-mail.",
        team.agent.id,
    )
    for bad in ("   ", "x" * (NOTE_MAX_CHARS + 1)):
        with pytest.raises(ValidationError):
            contact_note_create(contact=contact, author=team.agent, content=bad)
    assert ContactNote.objects.count() == 1


def test_the_selector_reads_only_this_accounts_notes(team, other_team):
    contact = ContactFactory(account=team.account)
    contact_note_create(contact=contact, author=team.agent, content="Ours")
    assert contact_notes(account_id=other_team.account.id, contact_id=contact.id) == []
    assert [n.content for n in contact_notes(account_id=team.account.id, contact_id=contact.id)] == ["Ours"]


def test_an_agent_adds_a_note_and_sees_it_newest_first(agent_client, team):
    contact = ContactFactory(account=team.account, name="Ann")
    agent_client.post(page(team, contact, "notes/"), {"content": "First <b>call</b>"})
    response = agent_client.post(page(team, contact, "notes/"), {"content": "Second"}, follow=True)
    html = response.content.decode()
    assert "Note added." in html
    assert html.index("Second") < html.index("First &lt;b&gt;call&lt;/b&gt;")  # newest first, escaped
    assert "bob ·" in html


def test_bad_notes_are_named_and_nothing_is_stored(agent_client, team):
    contact = ContactFactory(account=team.account)
    response = agent_client.post(page(team, contact, "notes/"), {"content": "   "}, follow=True)
    assert "Note not added: Write the note first." in response.content.decode()
    response = agent_client.post(page(team, contact, "notes/"), {"content": "x" * 5001}, follow=True)
    assert "at most 5,000 characters" in response.content.decode()
    assert not ContactNote.objects.exists()


def test_another_accounts_contact_is_a_404(agent_client, team, other_team):
    theirs = ContactFactory(account=other_team.account)
    assert agent_client.post(page(team, theirs, "notes/"), {"content": "Hi"}).status_code == 404
    url = f"/app/accounts/{other_team.account.id}/contacts/{theirs.id}/notes/"
    assert agent_client.post(url, {"content": "Hi"}).status_code == 404
    assert agent_client.get(page(team, ContactFactory(account=team.account), "notes/")).status_code == 405
    assert not ContactNote.objects.exists()
