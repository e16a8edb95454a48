"""The teams REST API and one's own availability (API and the top-bar switch), scoped to the account."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from helpdesk.models import Membership, Team, TeamMember
from tests.factories import AccountFactory, InboxFactory, MembershipFactory, UserFactory

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def acme():
    account = AccountFactory(name="Acme")
    admin, agent, carol = (
        UserFactory(username="alice"),
        UserFactory(username="bob"),
        UserFactory(username="carol"),
    )
    MembershipFactory(account=account, user=admin, role=Membership.Role.ADMIN)
    MembershipFactory(account=account, user=agent)
    MembershipFactory(account=account, user=carol)
    InboxFactory(account=account)
    return account, admin, agent, carol


@pytest.fixture
def globex():
    account = AccountFactory(name="Globex")
    admin = UserFactory(username="mallory")
    MembershipFactory(account=account, user=admin, role=Membership.Role.ADMIN)
    return account, admin


def api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_an_admin_creates_and_updates_a_team_with_members(acme):
    account, admin, agent, carol = acme
    url = f"/api/v1/accounts/{account.id}/teams/"

    created = api(admin).post(url, {"name": "Billing", "members": [agent.id, carol.id]}, format="json")

    assert created.status_code == 201, created.content
    body = created.json()
    assert body["name"] == "Billing" and body["auto_assign"] is True
    assert [m["username"] for m in body["members"]] == ["bob", "carol"]
    team = Team.objects.get(pk=body["id"])
    assert team.account_id == account.id

    # Carol stays with her round-robin place; bob leaves; alice joins.
    TeamMember.objects.filter(team=team, user=carol).update(last_assigned_at="2026-01-01T00:00:00Z")
    changed = api(admin).patch(
        f"{url}{team.id}/", {"members": [carol.id, admin.id], "auto_assign": False}, format="json"
    )
    assert changed.status_code == 200, changed.content
    assert {m["username"] for m in changed.json()["members"]} == {"alice", "carol"}
    assert changed.json()["auto_assign"] is False
    assert TeamMember.objects.get(team=team, user=carol).last_assigned_at is not None

    listed = api(agent).get(url)
    assert listed.status_code == 200 and [t["name"] for t in listed.json()] == ["Billing"]


def test_members_must_be_people_of_the_account(acme, globex):
    account, admin, agent, _ = acme
    _, outsider = globex
    nobody = UserFactory()  # in no account at all

    response = api(admin).post(
        f"/api/v1/accounts/{account.id}/teams/",
        {"name": "Billing", "members": [agent.id, outsider.id, nobody.id]},
        format="json",
    )

    assert response.status_code == 400
    assert response.json()["members"] == [f"Not people of this account: {outsider.id}, {nobody.id}."]
    assert not Team.objects.exists()


def test_a_duplicate_name_is_refused(acme):
    account, admin, *_ = acme
    Team.objects.create(account=account, name="Billing")
    response = api(admin).post(f"/api/v1/accounts/{account.id}/teams/", {"name": "billing"}, format="json")
    assert response.status_code == 400 and "already has a team" in response.json()["name"][0]


def test_agents_read_but_do_not_write_teams(acme):
    account, _, agent, _ = acme
    team = Team.objects.create(account=account, name="Billing")
    url = f"/api/v1/accounts/{account.id}/teams/"
    assert api(agent).post(url, {"name": "Returns"}, format="json").status_code == 403
    assert api(agent).patch(f"{url}{team.id}/", {"name": "X"}, format="json").status_code == 403
    assert api(agent).get(f"{url}{team.id}/").status_code == 200


def test_another_accounts_teams_are_invisible(acme, globex):
    account, admin, *_ = acme
    other, outsider = globex
    theirs = Team.objects.create(account=other, name="Secret team")
    Team.objects.create(account=account, name="Billing")

    # Their own account does not list ours; ours does not list theirs; theirs is 404 under our account.
    assert [t["name"] for t in api(admin).get(f"/api/v1/accounts/{account.id}/teams/").json()] == ["Billing"]
    assert api(admin).get(f"/api/v1/accounts/{account.id}/teams/{theirs.id}/").status_code == 404
    assert (
        api(admin).patch(f"/api/v1/accounts/{account.id}/teams/{theirs.id}/", {"name": "x"}).status_code
        == 404
    )
    assert api(outsider).get(f"/api/v1/accounts/{account.id}/teams/").status_code == 404
    assert Team.objects.get(pk=theirs.pk).name == "Secret team"


def test_ones_own_availability_over_the_api(acme, globex):
    account, _, agent, carol = acme
    other, outsider = globex
    url = f"/api/v1/accounts/{account.id}/availability/"

    assert api(agent).get(url).json() == {"availability": "online", "max_open_assignments": 10}
    response = api(agent).patch(url, {"availability": "busy"}, format="json")
    assert response.status_code == 200 and response.json()["availability"] == "busy"
    assert Membership.objects.get(account=account, user=agent).availability == "busy"
    # Only the caller's own membership, only in this account.
    assert Membership.objects.get(account=account, user=carol).availability == "online"
    assert api(agent).patch(url, {"availability": "away"}, format="json").status_code == 400
    assert api(outsider).patch(url, {"availability": "offline"}, format="json").status_code == 404
    assert Membership.objects.get(account=other, user=outsider).availability == "online"


def test_the_top_bar_switch_without_javascript_and_with_fetch(client, acme):
    account, _, agent, _ = acme
    client.force_login(agent)
    page = client.get(f"/app/accounts/{account.id}/", follow=True)
    html = page.content.decode()
    assert f'action="/app/accounts/{account.id}/availability/"' in html
    assert '<option value="online" selected>Online</option>' in html

    # A plain form post: back to the page it came from, with a message.
    back = f"/app/accounts/{account.id}/lists/mine/"
    response = client.post(
        f"/app/accounts/{account.id}/availability/", {"availability": "offline", "next": back}
    )
    assert response.status_code == 302 and response["Location"] == back
    assert Membership.objects.get(account=account, user=agent).availability == "offline"
    assert (
        '<option value="offline" selected>Offline</option>' in client.get(back, follow=True).content.decode()
    )

    # fetch: JSON, no redirect.
    response = client.post(
        f"/app/accounts/{account.id}/availability/", {"availability": "busy"}, HTTP_ACCEPT="application/json"
    )
    assert response.status_code == 200 and response.json() == {"availability": "busy", "label": "busy"}
    bad = client.post(
        f"/app/accounts/{account.id}/availability/", {"availability": "gone"}, HTTP_ACCEPT="application/json"
    )
    assert bad.status_code == 400


def test_the_switch_never_redirects_off_site_and_is_scoped(client, acme, globex):
    account, _, agent, _ = acme
    other, _ = globex
    client.force_login(agent)
    response = client.post(
        f"/app/accounts/{account.id}/availability/", {"availability": "busy", "next": "https://evil.example/"}
    )
    assert response["Location"] == f"/app/accounts/{account.id}/"
    assert client.post(f"/app/accounts/{other.id}/availability/", {"availability": "busy"}).status_code == 404
    assert client.get(f"/app/accounts/{account.id}/availability/").status_code == 405


@pytest.mark.parametrize(
    "body",
    [
        {"name": "Billing", "members": [10**30]},
        {"name": "Billing", "members": "1,2"},
        {"name": "Billing", "members": [None]},
        {"name": ""},
        {"name": "   "},
        {"name": "x" * 101},
        {"name": "Billing", "auto_assign": "maybe"},
        {},
    ],
)
def test_malformed_team_writes_are_400_not_500(acme, body):
    account, admin, *_ = acme
    response = api(admin).post(f"/api/v1/accounts/{account.id}/teams/", body, format="json")
    assert response.status_code == 400, response.content
    assert not Team.objects.exists()
