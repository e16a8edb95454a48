"""The Canned responses page: agents (not only administrators) add and edit the account's saved replies; deleting
is for administrators; a clash or a bad short code is said and changes nothing; another account's are never shown
or changed."""

from __future__ import annotations

import pytest
from django.test import Client

from helpdesk.models import CannedResponse

pytestmark = pytest.mark.django_db


def url(team, suffix: str = "") -> str:
    return f"/app/accounts/{team.account.id}/canned-responses/{suffix}"


def test_an_agent_adds_and_edits_one(agent_client, team):
    response = agent_client.post(
        url(team), {"short_code": "Late", "content": "Sorry for the wait."}, follow=True
    )
    assert "Added /late." in response.content.decode()
    canned = CannedResponse.objects.get(account=team.account)
    assert (canned.short_code, canned.content) == ("late", "Sorry for the wait.")
    response = agent_client.post(
        url(team, f"{canned.id}/"), {"short_code": "late", "content": "Sorry, {{contact.name}}."}, follow=True
    )
    assert "Saved /late." in response.content.decode()
    canned.refresh_from_db()
    assert canned.content == "Sorry, {{contact.name}}."
    html = agent_client.get(url(team)).content.decode()
    assert f'data-canned="{canned.id}"' in html and 'name="delete"' not in html  # no delete for agents


def test_bad_input_is_named_and_changes_nothing(agent_client, team):
    CannedResponse.objects.create(account=team.account, short_code="hello", content="Hi")
    other = CannedResponse.objects.create(account=team.account, short_code="bye", content="Bye")
    response = agent_client.post(url(team), {"short_code": "hello", "content": "Again"}, follow=True)
    assert "already used in this account" in response.content.decode()
    response = agent_client.post(url(team), {"short_code": "two words", "content": "x"}, follow=True)
    assert "underscores, or hyphens" in response.content.decode()
    response = agent_client.post(
        url(team, f"{other.id}/"), {"short_code": "hello", "content": "Bye"}, follow=True
    )
    assert "/bye was not changed" in response.content.decode()
    response = agent_client.post(url(team), {"short_code": "long", "content": "x" * 10_001}, follow=True)
    assert "At most 10,000 characters." in response.content.decode()
    assert sorted(CannedResponse.objects.values_list("short_code", flat=True)) == ["bye", "hello"]


def test_only_administrators_delete(agent_client, team):
    canned = CannedResponse.objects.create(account=team.account, short_code="old", content="Old")
    admin_client = Client()
    admin_client.force_login(team.admin)
    response = agent_client.post(url(team, f"{canned.id}/"), {"delete": "1"}, follow=True)
    assert "Only administrators delete" in response.content.decode()
    assert CannedResponse.objects.filter(pk=canned.pk).exists()
    assert 'name="delete"' in admin_client.get(url(team)).content.decode()
    admin_client.post(url(team, f"{canned.id}/"), {"delete": "1"})
    assert not CannedResponse.objects.filter(pk=canned.pk).exists()


def test_another_accounts_are_never_shown_or_changed(agent_client, team, other_team):
    theirs = CannedResponse.objects.create(account=other_team.account, short_code="secret", content="Theirs")
    assert "Theirs" not in agent_client.get(url(team)).content.decode()
    assert (
        agent_client.post(url(team, f"{theirs.id}/"), {"short_code": "x", "content": "y"}).status_code == 404
    )
    assert agent_client.get(f"/app/accounts/{other_team.account.id}/canned-responses/").status_code == 404
    theirs.refresh_from_db()
    assert theirs.content == "Theirs"


def test_search_and_the_link_in_the_top_bar(agent_client, team):
    CannedResponse.objects.create(account=team.account, short_code="shipping", content="Ships in 2 days.")
    CannedResponse.objects.create(account=team.account, short_code="refund", content="Refunds take 5 days.")
    html = agent_client.get(url(team) + "?q=ship").content.decode()
    assert "Ships in 2 days." in html and "Refunds take" not in html
    assert (
        f'href="{url(team)}"'
        in agent_client.get(f"/app/accounts/{team.account.id}/lists/all/").content.decode()
    )
