"""Invitations over the REST API: administrators invite (the mail carries the link, the answer never the token),
list the account's invitations with their state and withdraw one; an agent gets 403, another account 404, an
address already a member a clear 400, and withdrawing a used or withdrawn invitation a 400 that changes nothing."""

from __future__ import annotations

import re

import pytest
from django.core import mail
from rest_framework.test import APIClient

from helpdesk.models import Invitation, Membership
from helpdesk.services.invitations import invitation_accept
from tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin():
    return MembershipFactory(role=Membership.Role.ADMIN)


@pytest.fixture
def agent(admin):
    return MembershipFactory(account=admin.account, role=Membership.Role.AGENT)


def client_of(membership) -> APIClient:
    api = APIClient()
    api.force_authenticate(membership.user)
    return api


def url(membership, suffix: str = "") -> str:
    return f"/api/v1/accounts/{membership.account_id}/invitations/{suffix}"


@pytest.fixture
def invite(admin, django_capture_on_commit_callbacks):
    def invite(email: str = "Dana@Example.com", role: str = "agent"):
        with django_capture_on_commit_callbacks(execute=True):
            response = client_of(admin).post(url(admin), {"email": email, "role": role}, format="json")
        return response

    return invite


def test_an_admin_invites_and_the_answer_has_no_token(admin, invite):
    created = invite(role="admin")

    assert created.status_code == 201, created.data
    assert created.data["email"] == "dana@example.com"
    assert (created.data["role"], created.data["state"]) == ("admin", "pending")
    assert created.data["invited_by"] == admin.user_id
    token = re.search(r"/invite/([\w-]+)/", mail.outbox[-1].body).group(1)
    assert token not in str(created.data) and "token" not in str(created.data)
    assert mail.outbox[-1].to == ["dana@example.com"]


def test_the_list_shows_each_invitation_with_its_state(admin, invite):
    first = invite(email="dana@example.com").data
    token = re.search(r"/invite/([\w-]+)/", mail.outbox[-1].body).group(1)
    invitation_accept(token=token, name="Dana", password="a-long-pass-phrase-42")
    invite(email="erin@example.com")

    listed = client_of(admin).get(url(admin))

    assert listed.status_code == 200
    assert [(row["email"], row["state"]) for row in listed.data["results"]] == [
        ("erin@example.com", "pending"),
        ("dana@example.com", "accepted"),
    ]
    assert listed.data["results"][1]["id"] == first["id"]


def test_an_address_already_a_member_is_a_clear_400(admin, agent, invite):
    refused = invite(email=agent.user.email.upper())

    assert refused.status_code == 400
    assert refused.data["email"] == [f"{agent.user.email} is already a member of this account."]
    assert not Invitation.objects.exists() and not mail.outbox


def test_a_bad_address_or_role_is_a_400(admin, invite):
    assert invite(email="not-an-address").status_code == 400
    assert invite(role="owner").status_code == 400
    assert not Invitation.objects.exists()


def test_an_agent_may_not_invite_list_or_withdraw(admin, agent, invite):
    invitation_id = invite().data["id"]
    api = client_of(agent)

    assert api.post(url(agent), {"email": "x@example.com", "role": "admin"}, format="json").status_code == 403
    assert api.get(url(agent)).status_code == 403
    assert api.delete(url(agent, f"{invitation_id}/")).status_code == 403
    assert Invitation.objects.get().revoked_at is None
    assert Invitation.objects.count() == 1


def test_another_accounts_admin_gets_404(admin, invite):
    invitation_id = invite().data["id"]
    stranger = MembershipFactory(role=Membership.Role.ADMIN)
    api = client_of(stranger)

    assert api.get(url(admin)).status_code == 404
    assert api.delete(url(admin, f"{invitation_id}/")).status_code == 404
    assert api.delete(url(stranger, f"{invitation_id}/")).status_code == 404  # not one of its own either
    assert Invitation.objects.get().revoked_at is None


def test_withdrawing_stops_the_link_and_a_second_withdraw_is_a_400(admin, invite):
    invitation_id = invite().data["id"]
    api = client_of(admin)

    assert api.delete(url(admin, f"{invitation_id}/")).status_code == 204
    again = api.delete(url(admin, f"{invitation_id}/"))

    assert again.status_code == 400
    assert again.data["non_field_errors"] == ["This invitation was withdrawn."]
    assert api.get(url(admin)).data["results"][0]["state"] == "revoked"
