"""Canned responses over the REST API: agents read, search, create and change, administrators also delete; a
short code is unique per account; another account's canned responses are never listed and answer 404."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from helpdesk.models import CannedResponse, Membership
from tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin():
    return MembershipFactory(role=Membership.Role.ADMIN)


@pytest.fixture
def agent(admin):
    return MembershipFactory(account=admin.account, role=Membership.Role.AGENT)


@pytest.fixture
def stranger():
    return MembershipFactory(role=Membership.Role.ADMIN)


def client_of(membership) -> APIClient:
    api = APIClient()
    api.force_authenticate(membership.user)
    return api


def url(account_id: int, suffix: str = "") -> str:
    return f"/api/v1/accounts/{account_id}/canned-responses/{suffix}"


def test_admin_creates_changes_and_deletes(admin):
    api = client_of(admin)
    created = api.post(url(admin.account_id), {"short_code": "Refund", "content": "Refunds take 5 days."})
    assert created.status_code == 201, created.data
    assert created.data["short_code"] == "refund"  # short codes are lower case, as typed after "/"
    pk = created.data["id"]
    changed = api.patch(url(admin.account_id, f"{pk}/"), {"content": "Refunds take 3 days."}, format="json")
    assert changed.status_code == 200 and changed.data["content"] == "Refunds take 3 days."
    assert CannedResponse.objects.get(pk=pk).content == "Refunds take 3 days."
    assert api.delete(url(admin.account_id, f"{pk}/")).status_code == 204
    assert not CannedResponse.objects.filter(pk=pk).exists()


def test_short_code_is_unique_within_the_account_only(admin, stranger):
    assert (
        client_of(admin).post(url(admin.account_id), {"short_code": "hi", "content": "a"}).status_code == 201
    )
    again = client_of(admin).post(url(admin.account_id), {"short_code": "hi", "content": "b"})
    assert again.status_code == 400 and "short_code" in again.data
    elsewhere = client_of(stranger).post(url(stranger.account_id), {"short_code": "hi", "content": "c"})
    assert elsewhere.status_code == 201


def test_bad_short_code_is_400(admin):
    response = client_of(admin).post(url(admin.account_id), {"short_code": "two words", "content": "x"})
    assert response.status_code == 400 and "short_code" in response.data
    assert not CannedResponse.objects.exists()


def test_agent_reads_searches_creates_and_changes_but_cannot_delete(admin, agent):
    CannedResponse.objects.create(account=admin.account, short_code="shipping", content="Ships in 2 days.")
    CannedResponse.objects.create(account=admin.account, short_code="refund", content="About shipping costs")
    api = client_of(agent)
    listed = api.get(url(admin.account_id))
    assert listed.status_code == 200 and listed.data["count"] == 2
    found = api.get(url(admin.account_id), {"q": "ship"})
    # The short code that starts with the text first, then contents that contain it.
    assert [r["short_code"] for r in found.data["results"]] == ["shipping", "refund"]
    one = CannedResponse.objects.get(short_code="refund")
    assert api.get(url(admin.account_id, f"{one.pk}/")).status_code == 200
    assert api.post(url(admin.account_id), {"short_code": "x", "content": "y"}).status_code == 201
    assert api.patch(url(admin.account_id, f"{one.pk}/"), {"content": "z"}).status_code == 200
    assert api.delete(url(admin.account_id, f"{one.pk}/")).status_code == 403
    assert CannedResponse.objects.count() == 3
    one.refresh_from_db()
    assert one.content == "z"


def test_another_accounts_canned_responses_never_show(admin, stranger):
    theirs = CannedResponse.objects.create(account=stranger.account, short_code="secret", content="Theirs")
    api = client_of(admin)
    assert api.get(url(admin.account_id)).data["count"] == 0
    assert api.get(url(admin.account_id), {"q": "secret"}).data["results"] == []
    for method in ("get", "patch", "delete"):
        assert getattr(api, method)(url(admin.account_id, f"{theirs.pk}/")).status_code == 404
    # Their account's URL: the caller is not a member, so it does not exist for them.
    assert api.get(url(stranger.account_id)).status_code == 404
    assert CannedResponse.objects.get(pk=theirs.pk).content == "Theirs"
