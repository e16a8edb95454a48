"""Sign-in security over the API: administrators read members' two-factor state and history and require two-factor
sign-in (only once they have it themselves); agents get 403, another account's member 404."""

from __future__ import annotations

import pytest
from django_otp.plugins.otp_totp.models import TOTPDevice
from rest_framework.test import APIClient

from helpdesk.models import Membership, SignInEvent
from tests.factories import AccountFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin():
    return MembershipFactory(user=UserFactory(username="root"), role=Membership.Role.ADMIN)


def api(membership) -> APIClient:
    client = APIClient()
    client.force_authenticate(membership.user)  # a token-like caller: no session, no second factor asked
    return client


def test_an_administrator_reads_the_state_and_requires_two_factor_once_they_have_it(admin):
    agent = MembershipFactory(account=admin.account, user=UserFactory(username="ben"))
    url = f"/api/v1/accounts/{admin.account_id}/security/"
    state = api(admin).get(url)
    assert state.status_code == 200
    assert state.json()["require_two_factor"] is False
    assert {m["username"]: m["two_factor"] for m in state.json()["members"]} == {"root": False, "ben": False}

    refused = api(admin).patch(url, {"require_two_factor": True}, format="json")
    assert refused.status_code == 400
    assert "yourself first" in refused.json()["require_two_factor"][0]
    admin.account.refresh_from_db()
    assert not admin.account.require_two_factor

    TOTPDevice.objects.create(user=admin.user, name="authenticator", confirmed=True)
    done = api(admin).patch(url, {"require_two_factor": True}, format="json")
    assert done.status_code == 200
    assert done.json()["require_two_factor"] is True
    assert {m["username"]: m["two_factor"] for m in done.json()["members"]} == {"root": True, "ben": False}
    assert api(agent).get(url).status_code == 403
    assert api(agent).patch(url, {"require_two_factor": False}, format="json").status_code == 403


def test_a_members_sign_in_history_stays_in_its_account(admin):
    agent = MembershipFactory(account=admin.account, user=UserFactory(username="ben"))
    stranger = MembershipFactory(account=AccountFactory(), user=UserFactory(username="zed"))
    SignInEvent.objects.create(user=agent.user, username="ben", outcome=SignInEvent.Outcome.WRONG_PASSWORD)
    SignInEvent.objects.create(user=stranger.user, username="zed", outcome=SignInEvent.Outcome.SIGNED_IN)
    base = f"/api/v1/accounts/{admin.account_id}/security/members/"
    history = api(admin).get(f"{base}{agent.user_id}/sign-ins/")
    assert history.status_code == 200
    assert [(e["username"], e["outcome"]) for e in history.json()] == [("ben", "wrong_password")]
    assert api(admin).get(f"{base}{stranger.user_id}/sign-ins/").status_code == 404
