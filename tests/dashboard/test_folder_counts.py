"""lists/counts.json: every folder's count with the page's filters, for the sidebar of an open conversation to
follow live events; members of the account only."""

from __future__ import annotations

import pytest

from tests.factories import ConversationFactory, InboxFactory

pytestmark = pytest.mark.django_db


def test_counts_follow_the_filters_and_the_statuses(agent_client, team):
    other_inbox = InboxFactory(account=team.account)
    ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    ConversationFactory(contact_inbox__inbox=team.inbox, status="pending")
    ConversationFactory(contact_inbox__inbox=other_inbox, status="open")
    url = f"/app/accounts/{team.account.id}/lists/counts.json"
    counts = agent_client.get(url).json()["counts"]
    assert (counts["needs-people"], counts["ai"], counts["all"]) == (2, 1, 3)
    filtered = agent_client.get(url, {"inbox": team.inbox.pk, "list": "needs-people"}).json()["counts"]
    assert (filtered["needs-people"], filtered["all"]) == (1, 2)


def test_counts_are_for_members_only(client, team, other_team):
    url = f"/app/accounts/{team.account.id}/lists/counts.json"
    assert client.get(url).status_code == 302
    client.force_login(other_team.admin)
    assert client.get(url).status_code == 404
