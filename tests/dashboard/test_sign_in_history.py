"""Sign-in history: every sign-in and refused attempt is recorded with address and browser, a person sees their
own, an administrator sees their members', and old entries go after SIGN_IN_RETENTION_DAYS."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from helpdesk.models import Membership, SignInEvent
from helpdesk.tasks import sign_in_retention_sweep
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "pass-word-123"


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def sign_in(client: Client, username: str, password: str):
    return client.post(
        "/auth/login/",
        {"username": username, "password": password},
        REMOTE_ADDR="198.51.100.4",
        HTTP_USER_AGENT="Mozilla/5.0 (Android) test",
    )


def test_sign_ins_and_failures_are_recorded_with_address_and_browser():
    carol = UserFactory(username="carol")
    client = Client()
    sign_in(client, "carol", "wrong")
    sign_in(client, "nobody", "guess")
    assert sign_in(client, "carol", PASSWORD).status_code == 302

    events = list(SignInEvent.objects.order_by("id"))
    assert [(e.username, e.user_id, e.outcome) for e in events] == [
        ("carol", carol.pk, SignInEvent.Outcome.WRONG_PASSWORD),
        ("nobody", None, SignInEvent.Outcome.WRONG_PASSWORD),
        ("carol", carol.pk, SignInEvent.Outcome.SIGNED_IN),
    ]
    assert {e.ip_address for e in events} == {"198.51.100.4"}
    assert {e.user_agent for e in events} == {"Mozilla/5.0 (Android) test"}
    # The password typed is never kept anywhere in the row.
    assert not SignInEvent.objects.filter(user_agent__contains="wrong").exists()


def test_a_person_sees_their_own_history_only():
    carol, dave = UserFactory(username="carol"), UserFactory(username="dave")
    sign_in(Client(), "dave", "wrong")
    client = Client()
    sign_in(client, "carol", PASSWORD)
    page = client.get("/app/security/")
    assert page.status_code == 200
    assert [e.user_id for e in page.context["history"]] == [carol.pk]
    assert "dave" not in page.content.decode()
    assert dave.pk not in {e.user_id for e in page.context["history"]}


def test_an_administrator_reads_a_members_history_and_an_agent_cannot():
    admin = MembershipFactory(user=UserFactory(username="root"), role=Membership.Role.ADMIN)
    agent = MembershipFactory(account=admin.account, user=UserFactory(username="ben"))
    sign_in(Client(), "ben", "wrong")
    url = f"/app/accounts/{admin.account_id}/security/members/{agent.user_id}/"
    admin_client, agent_client = Client(), Client()
    admin_client.force_login(admin.user)
    agent_client.force_login(agent.user)
    page = admin_client.get(url)
    assert page.status_code == 200
    assert [e.outcome for e in page.context["history"]][-1] == SignInEvent.Outcome.WRONG_PASSWORD
    assert agent_client.get(url).status_code == 403


def test_the_retention_sweep_deletes_only_entries_past_the_setting(settings):
    settings.HELPDESK = {**settings.HELPDESK, "SIGN_IN_RETENTION_DAYS": 30}
    carol = UserFactory(username="carol")
    old = SignInEvent.objects.create(user=carol, username="carol", outcome=SignInEvent.Outcome.SIGNED_IN)
    recent = SignInEvent.objects.create(user=carol, username="carol", outcome=SignInEvent.Outcome.SIGNED_IN)
    SignInEvent.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=31))
    SignInEvent.objects.filter(pk=recent.pk).update(created_at=timezone.now() - timedelta(days=29))
    assert sign_in_retention_sweep() == 1
    assert list(SignInEvent.objects.values_list("pk", flat=True)) == [recent.pk]

    settings.HELPDESK = {**settings.HELPDESK, "SIGN_IN_RETENTION_DAYS": 0}
    SignInEvent.objects.filter(pk=recent.pk).update(created_at=timezone.now() - timedelta(days=3650))
    assert sign_in_retention_sweep() == 0  # 0 keeps everything
