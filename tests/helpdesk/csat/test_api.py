"""`GET /api/v1/accounts/<id>/csat-responses/`: the account's ratings, filtered, and nobody else's."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from helpdesk.models import CsatResponse, Membership
from tests.factories import ContactInboxFactory, ConversationFactory, InboxFactory, MembershipFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def member():
    return MembershipFactory(role=Membership.Role.AGENT)


@pytest.fixture
def api(member):
    client = APIClient()
    client.force_authenticate(member.user)
    return client


def rated(account, rating: int, *, comment: str = "", inbox=None, days_ago: int = 0) -> CsatResponse:
    inbox = inbox or InboxFactory(account=account)
    conversation = ConversationFactory(contact_inbox=ContactInboxFactory(inbox=inbox), status="resolved")
    response = CsatResponse.objects.create(
        account=account, conversation=conversation, rating=rating, comment=comment
    )
    if days_ago:
        CsatResponse.objects.filter(pk=response.pk).update(
            created_at=timezone.now() - timedelta(days=days_ago)
        )
    return response


def url(account_id: int, query: str = "") -> str:
    return f"/api/v1/accounts/{account_id}/csat-responses/{query}"


def test_lists_the_accounts_ratings_newest_first(api, member):
    older = rated(member.account, 2, comment="Slow", days_ago=3)
    newer = rated(member.account, 5)
    body = api.get(url(member.account_id)).json()
    assert body["count"] == 2
    assert [r["id"] for r in body["results"]] == [newer.pk, older.pk]
    first = body["results"][1]
    assert first["rating"] == 2 and first["comment"] == "Slow"
    assert first["conversation"] == older.conversation_id
    assert first["inbox"] == older.conversation.inbox_id
    assert first["contact"] == older.conversation.contact_id


def test_filters_by_inbox_conversation_and_dates(api, member):
    inbox = InboxFactory(account=member.account)
    in_inbox = rated(member.account, 4, inbox=inbox, days_ago=10)
    recent = rated(member.account, 1)
    ids = lambda query: [r["id"] for r in api.get(url(member.account_id, query)).json()["results"]]  # noqa: E731
    assert ids(f"?inbox={inbox.pk}") == [in_inbox.pk]
    assert ids(f"?conversation={recent.conversation_id}") == [recent.pk]
    since = (timezone.now() - timedelta(days=1)).isoformat().replace("+00:00", "Z")
    assert ids(f"?since={since}") == [recent.pk]
    assert ids(f"?until={since}") == [in_inbox.pk]
    assert api.get(url(member.account_id, "?since=yesterday")).status_code == 400


def test_another_accounts_ratings_never_appear(api, member):
    mine = rated(member.account, 3)
    other = MembershipFactory()
    theirs = rated(other.account, 1, comment="Private to them")
    body = api.get(url(member.account_id)).json()
    assert [r["id"] for r in body["results"]] == [mine.pk]
    # Not even when the caller names the other account's conversation or inbox in a filter.
    assert api.get(url(member.account_id, f"?conversation={theirs.conversation_id}")).json()["count"] == 0
    assert api.get(url(member.account_id, f"?inbox={theirs.conversation.inbox_id}")).json()["count"] == 0
    # And the other account's URL is a 404 for someone who is not its member.
    assert api.get(url(other.account_id)).status_code == 404


def test_anonymous_caller_gets_401(member):
    assert APIClient().get(url(member.account_id)).status_code == 401
