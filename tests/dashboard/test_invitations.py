"""Invitations: an administrator invites an address with a role, the mail's one-time link makes a new person (name
and password) or lets an existing user join, and every link that no longer works (used, expired, withdrawn,
replaced, unknown) is refused with a clear page and changes nothing."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, connection
from django.utils import timezone

from helpdesk.models import AuditEntry, Invitation, Membership
from helpdesk.services import invitations as invitations_service
from helpdesk.services.invitations import (
    InvitationError,
    invitation_accept,
    invitation_create,
    invitation_revoke,
)
from tests.factories import AccountFactory, MembershipFactory, UserFactory


def test_an_address_has_one_open_invitation_per_account(team):
    later = timezone.now() + timedelta(days=7)
    Invitation.objects.create(
        account=team.account, email="dana@example.com", token_hash="a" * 64, expires_at=later
    )
    Invitation.objects.create(
        account=team.account,
        email="dana@example.com",
        token_hash="b" * 64,
        expires_at=later,
        revoked_at=timezone.now(),  # a withdrawn one does not count
    )

    with pytest.raises(IntegrityError):
        Invitation.objects.create(
            account=team.account, email="dana@example.com", token_hash="c" * 64, expires_at=later
        )


# ---- services -----------------------------------------------------------------------------------------------


@pytest.fixture
def invite(team, django_capture_on_commit_callbacks):
    """Invite as the account's administrator, the mail sent as after a commit; returns (the invitation, the
    token from the mail's link)."""

    def invite(email="Dana@Example.com", role=Membership.Role.AGENT) -> tuple[Invitation, str]:
        with django_capture_on_commit_callbacks(execute=True):
            invitation = invitation_create(
                account_id=team.account.pk, email=email, role=role, invited_by=team.admin
            )
        return invitation, token_from(mail.outbox[-1].body)

    return invite


def token_from(body: str) -> str:
    match = re.search(r"/invite/([\w-]+)/", body)
    assert match, body
    return match.group(1)


def test_an_admin_invites_and_the_mail_carries_a_link_whose_token_is_stored_only_as_a_hash(
    team, settings, invite
):
    settings.PUBLIC_BASE_URL = "https://help.example.com"

    invitation, token = invite()

    sent = mail.outbox[-1]
    assert sent.to == ["dana@example.com"]
    assert "Acme" in sent.subject
    assert f"https://help.example.com/invite/{token}/" in sent.body
    assert invitation.email == "dana@example.com" and invitation.role == "agent"
    assert invitation.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token not in json.dumps(list(Invitation.objects.values()), default=str)
    assert invitation.expires_at - invitation.created_at == pytest.approx(
        timedelta(days=7), abs=timedelta(seconds=5)
    )


def test_the_link_lasts_the_configured_days(team, settings, invite):
    settings.HELPDESK = {**settings.HELPDESK, "INVITATION_DAYS": 2}

    invitation, _ = invite()

    assert invitation.expires_at - invitation.created_at == pytest.approx(
        timedelta(days=2), abs=timedelta(seconds=5)
    )


def test_inviting_again_replaces_the_old_link(team, invite):
    first, old_token = invite()
    second, new_token = invite(role=Membership.Role.ADMIN)

    first.refresh_from_db()
    assert first.revoked_at is not None and second.revoked_at is None
    with pytest.raises(InvitationError) as refused:
        invitation_accept(token=old_token, name="Dana", password="a-long-pass-phrase-42")
    assert refused.value.code == "revoked"
    membership = invitation_accept(token=new_token, name="Dana", password="a-long-pass-phrase-42")
    assert membership.role == Membership.Role.ADMIN


def test_an_agent_may_not_invite(team):
    with pytest.raises(PermissionDenied):
        invitation_create(
            account_id=team.account.pk, email="x@example.com", role="agent", invited_by=team.agent
        )
    assert not Invitation.objects.exists() and not mail.outbox


def test_an_address_already_a_member_is_refused_clearly(team):
    with pytest.raises(InvitationError) as refused:
        invitation_create(
            account_id=team.account.pk, email="BOB@example.com", role="agent", invited_by=team.admin
        )
    assert refused.value.code == "member"
    assert "bob@example.com is already a member" in refused.value.message
    assert not Invitation.objects.exists() and not mail.outbox


def test_a_new_person_sets_a_name_and_password_and_joins_with_the_role(team, invite):
    invitation, token = invite(role=Membership.Role.ADMIN)

    membership = invitation_accept(token=token, name="Dana Scully", password="a-long-pass-phrase-42")

    user = membership.user
    assert (user.username, user.email, user.first_name) == (
        "dana@example.com",
        "dana@example.com",
        "Dana Scully",
    )
    assert user.check_password("a-long-pass-phrase-42")
    assert (membership.account_id, membership.role) == (team.account.pk, Membership.Role.ADMIN)
    invitation.refresh_from_db()
    assert invitation.accepted_at is not None and invitation.accepted_by_id == user.pk


def test_a_weak_password_is_refused_and_nothing_changes(team, invite):
    invitation, token = invite()

    with pytest.raises(ValidationError):
        invitation_accept(token=token, name="Dana", password="12345678")

    invitation.refresh_from_db()
    assert invitation.accepted_at is None
    assert not User.objects.filter(email="dana@example.com").exists()


def test_an_existing_user_joins_signed_in_and_may_not_make_a_second_user(team, other_team, invite):
    dana = UserFactory(username="dana", email="Dana@example.com")
    _, token = invite()

    with pytest.raises(InvitationError) as refused:
        invitation_accept(token=token, name="Dana", password="a-long-pass-phrase-42")
    assert refused.value.code == "sign_in"
    with pytest.raises(InvitationError) as wrong:
        invitation_accept(token=token, user=other_team.admin)
    assert wrong.value.code == "wrong_person"
    membership = invitation_accept(token=token, user=dana)

    assert membership.user == dana and membership.account == team.account
    assert User.objects.filter(email__iexact="dana@example.com").count() == 1


def test_a_link_used_twice_is_refused_and_changes_nothing(team, invite):
    _, token = invite()
    invitation_accept(token=token, name="Dana", password="a-long-pass-phrase-42")
    before = (User.objects.count(), Membership.objects.count())

    with pytest.raises(InvitationError) as refused:
        invitation_accept(token=token, name="Eve", password="another-long-phrase-7")

    assert refused.value.code == "used"
    assert (User.objects.count(), Membership.objects.count()) == before


def test_an_expired_link_is_refused_and_changes_nothing(team, invite):
    invitation, token = invite()
    Invitation.objects.filter(pk=invitation.pk).update(expires_at=timezone.now() - timedelta(seconds=1))

    with pytest.raises(InvitationError) as refused:
        invitation_accept(token=token, name="Dana", password="a-long-pass-phrase-42")

    assert refused.value.code == "expired"
    assert not User.objects.filter(email="dana@example.com").exists()
    invitation.refresh_from_db()
    assert invitation.accepted_at is None


def test_a_withdrawn_link_is_refused_and_withdrawing_twice_says_so(team, invite):
    invitation, token = invite()
    invitation_revoke(account_id=team.account.pk, invitation_id=invitation.pk, revoked_by=team.admin)

    with pytest.raises(InvitationError) as refused:
        invitation_accept(token=token, name="Dana", password="a-long-pass-phrase-42")
    assert refused.value.code == "revoked"
    with pytest.raises(InvitationError) as again:
        invitation_revoke(account_id=team.account.pk, invitation_id=invitation.pk, revoked_by=team.admin)
    assert again.value.code == "revoked"
    assert not User.objects.filter(email="dana@example.com").exists()


def test_an_agent_may_not_withdraw_and_another_accounts_invitation_is_unknown(team, other_team, invite):
    invitation, _ = invite()
    with pytest.raises(PermissionDenied):
        invitation_revoke(account_id=team.account.pk, invitation_id=invitation.pk, revoked_by=team.agent)
    with pytest.raises(InvitationError) as unknown:
        invitation_revoke(
            account_id=other_team.account.pk, invitation_id=invitation.pk, revoked_by=other_team.admin
        )
    assert unknown.value.code == "unknown"
    invitation.refresh_from_db()
    assert invitation.revoked_at is None


def test_an_unknown_token_is_refused(team):
    with pytest.raises(InvitationError) as refused:
        invitation_accept(token="not-a-token-anyone-was-sent", name="Dana", password="a-long-pass-phrase-42")
    assert refused.value.code == "unknown"


def test_invitations_made_and_withdrawn_and_the_membership_are_in_the_audit_log(team, invite):
    already = AuditEntry.objects.count()  # the fixture's own rows
    invite()
    _, token = invite()  # replaces the first
    invitation_accept(token=token, name="Dana", password="a-long-pass-phrase-42")

    entries = list(AuditEntry.objects.order_by("id").values_list("model", "action")[already:])
    assert entries == [
        ("helpdesk.invitation", "created"),
        ("helpdesk.invitation", "updated"),  # the first one withdrawn
        ("helpdesk.invitation", "created"),
        ("helpdesk.membership", "created"),
    ]
    created = AuditEntry.objects.filter(model="helpdesk.invitation").first()
    assert created.changes["email"] == [None, "dana@example.com"]
    assert "token_hash" not in created.changes


@pytest.mark.django_db(transaction=True)
def test_two_accepts_racing_one_wins(monkeypatch):
    """Both tabs find the link open before either writes; the conditional UPDATE lets exactly one through."""
    account = AccountFactory(name="Acme")
    admin = UserFactory(username="alice")
    MembershipFactory(account=account, user=admin, role=Membership.Role.ADMIN)
    invitation_create(account_id=account.pk, email="dana@example.com", role="agent", invited_by=admin)
    token = token_from(mail.outbox[-1].body)
    both_read = threading.Barrier(2, timeout=10)
    real_lookup = invitations_service.invitation_for_token

    def lookup_then_wait(*, token: str):
        found = real_lookup(token=token)
        both_read.wait()
        return found

    monkeypatch.setattr(invitations_service, "invitation_for_token", lookup_then_wait)
    results: list[str] = []

    def tab(name: str) -> None:
        try:
            invitation_accept(token=token, name=name, password="a-long-pass-phrase-42")
            results.append("joined")
        except InvitationError as exc:
            results.append(exc.code)
        finally:
            connection.close()

    threads = [threading.Thread(target=tab, args=(name,)) for name in ("Dana", "Dana again")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)

    assert sorted(results) == ["joined", "used"]
    assert User.objects.filter(email="dana@example.com").count() == 1
    assert Membership.objects.filter(account=account).count() == 2


# ---- pages ------------------------------------------------------------------------------------------------------


def test_the_people_page_lists_members_and_pending_invitations_for_admins_only(
    team, other_team, admin_client, invite
):
    invitation, _ = invite()
    url = f"/app/accounts/{team.account.pk}/people/"

    page = admin_client.get(url)

    assert page.status_code == 200
    html = page.content.decode()
    assert "alice" in html and "bob" in html and "Administrator" in html
    assert f'data-invitation="{invitation.pk}"' in html and "dana@example.com" in html
    assert f'href="{url}"' in admin_client.get(f"/app/accounts/{team.account.pk}/audit/").content.decode()
    admin_client.force_login(team.agent)
    assert admin_client.get(url).status_code == 403
    assert admin_client.get(f"/app/accounts/{other_team.account.pk}/people/").status_code == 404


def test_the_invite_form_sends_the_mail_and_refuses_a_member_clearly(
    team, admin_client, django_capture_on_commit_callbacks
):
    url = f"/app/accounts/{team.account.pk}/people/invite/"
    with django_capture_on_commit_callbacks(execute=True):
        sent = admin_client.post(url, {"email": "dana@example.com", "role": "admin"})

    assert sent.status_code == 302
    assert mail.outbox[-1].to == ["dana@example.com"]
    assert Invitation.objects.get().role == "admin"
    refused = admin_client.post(url, {"email": "bob@example.com", "role": "agent"})
    assert refused.status_code == 400
    assert "bob@example.com is already a member of this account." in refused.content.decode()
    assert Invitation.objects.count() == 1 and len(mail.outbox) == 1


def test_an_agent_posting_the_invite_form_gets_403(team, agent_client):
    response = agent_client.post(
        f"/app/accounts/{team.account.pk}/people/invite/", {"email": "dana@example.com", "role": "admin"}
    )
    assert response.status_code == 403
    assert not Invitation.objects.exists() and not mail.outbox


def test_the_withdraw_button_stops_the_link(team, admin_client, client, invite):
    invitation, token = invite()

    response = admin_client.post(
        f"/app/accounts/{team.account.pk}/people/invitations/{invitation.pk}/withdraw/"
    )

    assert response.status_code == 302
    invitation.refresh_from_db()
    assert invitation.revoked_at is not None
    client.logout()
    gone = client.get(f"/invite/{token}/")
    assert gone.status_code == 410
    assert "This invitation was withdrawn." in gone.content.decode()


def test_a_new_person_accepts_on_the_page_lands_in_the_account_and_the_link_is_then_used(
    team, client, invite
):
    _, token = invite()
    url = f"/invite/{token}/"
    assert "Create account and join" in client.get(url).content.decode()

    weak = client.post(url, {"name": "Dana", "password1": "12345678", "password2": "12345678"})
    assert weak.status_code == 400 and "This password is entirely numeric." in weak.content.decode()
    assert not User.objects.filter(email="dana@example.com").exists()
    joined = client.post(
        url, {"name": "Dana", "password1": "a-long-pass-phrase-42", "password2": "a-long-pass-phrase-42"}
    )

    assert joined.status_code == 302 and joined["Location"] == f"/app/accounts/{team.account.pk}/"
    assert client.get(joined["Location"], follow=True).status_code == 200  # signed in, a member
    again = client.get(url)
    assert again.status_code == 410 and "This invitation has already been used." in again.content.decode()
    assert (
        client.post(
            url, {"name": "Eve", "password1": "x-long-pass-phrase-9", "password2": "x-long-pass-phrase-9"}
        ).status_code
        == 410
    )
    assert User.objects.filter(email="dana@example.com").count() == 1


def test_expired_and_unknown_links_get_a_clear_page(team, client, invite):
    invitation, token = invite()
    Invitation.objects.filter(pk=invitation.pk).update(expires_at=timezone.now() - timedelta(minutes=1))

    expired = client.get(f"/invite/{token}/")
    unknown = client.get("/invite/nobody-was-sent-this/")

    assert expired.status_code == 410 and "This invitation has expired." in expired.content.decode()
    assert unknown.status_code == 404 and "This invitation link is not valid." in unknown.content.decode()


def test_an_existing_user_is_asked_to_sign_in_and_then_joins(team, client, invite):
    dana = UserFactory(username="dana", email="dana@example.com")
    _, token = invite()
    url = f"/invite/{token}/"

    page = client.get(url).content.decode()
    assert "Sign in to join" in page and f"/auth/login/?next={url}" in page
    assert (
        client.post(
            url, {"name": "x", "password1": "a-long-pass-phrase-42", "password2": "a-long-pass-phrase-42"}
        ).status_code
        == 400
    )
    assert not Membership.objects.filter(user=dana).exists()
    client.force_login(dana)
    joined = client.post(url)

    assert joined.status_code == 302
    assert Membership.objects.get(user=dana).account == team.account


def test_someone_else_signed_in_is_told_to_sign_out_and_cannot_join(team, client, invite):
    _, token = invite()
    url = f"/invite/{token}/"
    client.force_login(team.agent)

    page = client.get(url).content.decode()
    refused = client.post(url)

    assert (
        "You are signed in as bob. Sign out, then open this link again to join as dana@example.com." in page
    )
    assert "data-wrong-person" in page
    assert refused.status_code == 400
    assert (
        "This invitation is for dana@example.com: sign in as that person to accept it."
        in refused.content.decode()
    )
    assert Invitation.objects.get().accepted_at is None
