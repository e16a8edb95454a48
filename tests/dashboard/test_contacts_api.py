"""The contacts REST API (helpdesk.api.contacts): list and search, edit, merge; tenants and bad input."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from helpdesk.models import Contact, Conversation
from tests.factories import ContactFactory, ContactInboxFactory, ConversationFactory


@pytest.fixture
def api(team) -> APIClient:
    client = APIClient()
    client.force_authenticate(team.agent)
    return client


def _base(team) -> str:
    return f"/api/v1/accounts/{team.account.pk}/contacts/"


def test_list_searches_the_accounts_contacts_only(api, team, other_team):
    ann = ContactFactory(account=team.account, name="Ann", phone="+1 555 0100")
    ContactFactory(account=team.account, name="Bob")
    ContactFactory(account=other_team.account, name="Ann")
    body = api.get(_base(team), {"q": "555"}).json()
    assert body["count"] == 1
    assert body["results"][0] | {"created_at": None} == {
        "id": ann.pk,
        "name": "Ann",
        "email": "",
        "phone": "+1 555 0100",
        "custom_attributes": {},
        "created_at": None,
    }


def test_a_search_over_200_characters_is_a_400(api, team):
    response = api.get(_base(team), {"q": "x" * 10_000})
    assert response.status_code == 400
    assert "q" in response.json()


def test_patch_edits_and_refuses_a_bad_email_naming_it(api, team):
    contact = ContactFactory(account=team.account, name="Ann")
    response = api.patch(
        f"{_base(team)}{contact.pk}/", {"name": "Ann Lee", "phone": "+49 30 1"}, format="json"
    )
    assert response.status_code == 200
    assert (response.json()["name"], response.json()["phone"]) == ("Ann Lee", "+49 30 1")
    response = api.patch(f"{_base(team)}{contact.pk}/", {"name": "X", "email": "nope"}, format="json")
    assert response.status_code == 400
    assert list(response.json()) == ["email"]
    contact.refresh_from_db()
    assert contact.name == "Ann Lee"


def test_another_accounts_contact_is_a_404(api, team, other_team):
    foreign = ContactFactory(account=other_team.account, name="Theirs")
    assert api.get(f"{_base(team)}{foreign.pk}/").status_code == 404
    assert api.patch(f"{_base(team)}{foreign.pk}/", {"name": "Mine"}, format="json").status_code == 404
    foreign.refresh_from_db()
    assert foreign.name == "Theirs"


def test_merge_moves_conversations_and_refuses_another_accounts_duplicate(api, team, other_team):
    kept = ContactFactory(account=team.account, name="Ann")
    duplicate = ContactFactory(account=team.account, name="Ann L")
    moved = ConversationFactory(contact_inbox=ContactInboxFactory(inbox=team.inbox, contact=duplicate))
    response = api.post(f"{_base(team)}{kept.pk}/merge/", {"duplicate_id": duplicate.pk}, format="json")
    assert response.status_code == 200
    assert Conversation.objects.get(pk=moved.pk).contact_id == kept.pk
    assert not Contact.objects.filter(pk=duplicate.pk).exists()

    foreign = ContactFactory(account=other_team.account)
    response = api.post(f"{_base(team)}{kept.pk}/merge/", {"duplicate_id": foreign.pk}, format="json")
    assert response.status_code == 400
    assert response.json() == {
        "duplicate_id": [f"No contact #{foreign.pk} in this account: only contacts of one account merge."]
    }
    assert Contact.objects.filter(pk=foreign.pk).exists()
    response = api.post(f"{_base(team)}{kept.pk}/merge/", {"duplicate_id": kept.pk}, format="json")
    assert response.status_code == 400
    assert "itself" in str(response.json())
