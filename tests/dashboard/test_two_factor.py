"""Two-factor sign-in (django-otp TOTP + backup codes): setting it up, signing in with it, what a wrong code costs,
and an account that requires it. Codes are computed here from the device's secret, as an authenticator app does."""

from __future__ import annotations

import time

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.test import Client
from django_otp.oath import TOTP
from django_otp.plugins.otp_static.models import StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice
from rest_framework.authtoken.models import Token

from helpdesk.models import Membership, SignInEvent
from tests.factories import AccountFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "pass-word-123"
SECURITY = "/app/security/"


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def code_for(device: TOTPDevice, steps_ahead: int = 0) -> str:
    """The code an app shows now (or `steps_ahead` 30-second steps later: a step already used is refused)."""
    totp = TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift)
    totp.time = time.time() + steps_ahead * device.step
    return f"{totp.token():0{device.digits}d}"


def enrol(client: Client, user) -> tuple[TOTPDevice, list[str]]:
    client.post(SECURITY, {"action": "start"})
    device = TOTPDevice.objects.get(user=user)
    page = client.post(SECURITY, {"action": "confirm", "code": code_for(device)})
    assert page.status_code == 200
    return device, page.context["new_codes"]


def password_step(client: Client, username: str, next_url: str = ""):
    data = {"username": username, "password": PASSWORD}
    url = "/auth/login/" + (f"?next={next_url}" if next_url else "")
    return client.post(url, data, REMOTE_ADDR="203.0.113.9", HTTP_USER_AGENT="Firefox test")


def signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


@pytest.fixture
def member():
    membership = MembershipFactory(user=UserFactory(username="ana"), role=Membership.Role.ADMIN)
    return membership


def test_setting_up_needs_a_code_from_the_app_and_gives_ten_backup_codes(client, member):
    client.force_login(member.user)
    started = client.post(SECURITY, {"action": "start"})
    assert started.status_code == 200
    assert b"<svg" in started.content  # the QR code, made on the server
    device = TOTPDevice.objects.get(user=member.user, confirmed=False)
    assert started.context["secret"] in started.content.decode()

    wrong = client.post(
        SECURITY, {"action": "confirm", "code": "000000" if code_for(device) != "000000" else "1"}
    )
    assert wrong.status_code == 400
    assert "not right" in wrong.context["error"]
    device.refresh_from_db()
    assert not device.confirmed
    device.throttle_reset()  # the wrong code throttles the device for a second

    done = client.post(SECURITY, {"action": "confirm", "code": code_for(device)})
    assert done.status_code == 200
    assert len(done.context["new_codes"]) == 10
    assert TOTPDevice.objects.get(pk=device.pk).confirmed
    assert StaticToken.objects.filter(device__user=member.user).count() == 10
    assert done.context["verified"]  # the session that set it up counts as verified


def test_with_it_on_the_password_alone_signs_nobody_in_and_the_code_does(member):
    client = Client()
    client.force_login(member.user)
    device, _ = enrol(client, member.user)
    client.logout()

    step = password_step(client, "ana", next_url=f"/app/accounts/{member.account_id}/")
    assert step.status_code == 302 and step["Location"] == "/auth/two-factor/"
    assert not signed_in(client)
    assert client.get(f"/app/accounts/{member.account_id}/").status_code == 302  # to the sign-in page
    assert client.get(f"/api/v1/accounts/{member.account_id}/conversations/").status_code in (401, 403)

    done = client.post(
        "/auth/two-factor/",
        {"code": code_for(device, steps_ahead=1)},
        REMOTE_ADDR="203.0.113.9",
        HTTP_USER_AGENT="Firefox test",
    )
    assert done.status_code == 302
    assert done["Location"] == f"/app/accounts/{member.account_id}/"
    assert signed_in(client)
    event = SignInEvent.objects.filter(user=member.user).latest("id")
    assert event.outcome == SignInEvent.Outcome.SIGNED_IN_TWO_FACTOR
    assert event.ip_address == "203.0.113.9"
    assert event.user_agent == "Firefox test"


def test_a_backup_code_signs_in_once(member):
    client = Client()
    client.force_login(member.user)
    _, codes = enrol(client, member.user)
    client.logout()

    password_step(client, "ana")
    assert client.post("/auth/two-factor/", {"code": codes[0].upper()}).status_code == 302
    assert signed_in(client)
    client.logout()
    password_step(client, "ana")
    again = client.post("/auth/two-factor/", {"code": codes[0]})
    assert again.status_code == 400
    assert not signed_in(client)
    assert StaticToken.objects.filter(device__user=member.user).count() == 9


def test_wrong_codes_are_throttled_then_end_the_attempt_then_lock_the_username(member):
    client = Client()
    client.force_login(member.user)
    device, _ = enrol(client, member.user)
    client.logout()
    right = code_for(device, steps_ahead=1)
    wrong = "123456" if right != "123456" else "654321"

    password_step(client, "ana")
    first = client.post("/auth/two-factor/", {"code": wrong})
    assert first.status_code == 400
    assert "not right" in first.content.decode()
    # At once again: the device is throttled, and even the right code is refused unchecked, with the wait.
    throttled = client.post("/auth/two-factor/", {"code": right})
    assert throttled.status_code == 400
    assert "Wait" in throttled.content.decode()
    assert not signed_in(client)

    # Time passes between each (the throttle's wait moved back): the third wrong code ends the attempt.
    for _ in range(2):
        TOTPDevice.objects.filter(pk=device.pk).update(throttling_failure_timestamp=None)
        ended = client.post("/auth/two-factor/", {"code": wrong})
    assert "Sign in again with your password" in ended.content.decode()
    assert client.post("/auth/two-factor/", {"code": right}).status_code == 400  # the attempt is gone
    assert not signed_in(client)

    # The password again; every wrong code was a failed sign-in for axes, so the fifth locks the username.
    assert password_step(client, "ana").status_code == 302
    TOTPDevice.objects.filter(pk=device.pk).update(throttling_failure_timestamp=None)
    assert client.post("/auth/two-factor/", {"code": wrong}).status_code == 400
    TOTPDevice.objects.filter(pk=device.pk).update(throttling_failure_timestamp=None)
    locked = client.post("/auth/two-factor/", {"code": wrong})
    assert locked.status_code == 429
    assert "Too many sign-in attempts" in locked.content.decode()
    assert AccessAttempt.objects.get(username="ana").failures_since_start == settings.AXES_FAILURE_LIMIT
    assert password_step(client, "ana").status_code == 429
    assert not signed_in(client)
    outcomes = list(SignInEvent.objects.filter(user=member.user).values_list("outcome", flat=True))
    # The fifth code is recorded as the lock it caused, the refused password after it as a lock too.
    assert outcomes.count(SignInEvent.Outcome.WRONG_CODE) == 4
    assert outcomes.count(SignInEvent.Outcome.LOCKED_OUT) == 2


def test_a_code_step_left_too_long_starts_over(member, monkeypatch):
    client = Client()
    client.force_login(member.user)
    device, _ = enrol(client, member.user)
    client.logout()
    password_step(client, "ana")
    session = client.session
    session["two_factor_pending"]["started"] -= 301
    session.save()
    late = client.post("/auth/two-factor/", {"code": code_for(device, steps_ahead=1)})
    assert late.status_code == 400
    assert "took too long" in late.content.decode()
    assert not signed_in(client)


def test_turning_it_off_needs_a_current_code(client, member):
    client.force_login(member.user)
    device, _ = enrol(client, member.user)
    refused = client.post(SECURITY, {"action": "disable", "code": "999999"})
    assert refused.status_code == 400
    assert TOTPDevice.objects.filter(user=member.user, confirmed=True).exists()
    # Counted like a wrong code at sign-in: in the history, and towards the lockout.
    assert SignInEvent.objects.filter(user=member.user, outcome=SignInEvent.Outcome.WRONG_CODE).count() == 1
    TOTPDevice.objects.filter(pk=device.pk).update(throttling_failure_timestamp=None)
    StaticToken.objects.filter(device__user=member.user)  # untouched by the refusal
    client.post(SECURITY, {"action": "disable", "code": code_for(device, steps_ahead=1)})
    assert not TOTPDevice.objects.filter(user=member.user).exists()
    assert not StaticToken.objects.filter(device__user=member.user).exists()


def test_an_account_that_requires_it_sends_members_without_it_to_set_it_up(member):
    agent = MembershipFactory(account=member.account, user=UserFactory(username="ben"))
    token = Token.objects.create(user=agent.user)
    admin_client = Client()
    admin_client.force_login(member.user)
    account_page = f"/app/accounts/{member.account_id}/security/"

    refused = admin_client.post(account_page, {"required": "on"})
    assert refused.status_code == 400  # the administrator has no second factor yet
    assert "for yourself first" in refused.content.decode()
    enrol(admin_client, member.user)
    assert admin_client.post(account_page, {"required": "on"}).status_code == 302
    member.account.refresh_from_db()
    assert member.account.require_two_factor

    agent_client = Client()
    agent_client.force_login(agent.user)
    lists = f"/app/accounts/{member.account_id}/lists/needs-people/"
    sent = agent_client.get(lists)
    assert sent.status_code == 302
    assert sent["Location"].startswith("/app/security/?next=")
    api = f"/api/v1/accounts/{member.account_id}/conversations/"
    assert agent_client.get(api).status_code == 403  # a session without the second factor
    assert Client().get(api, HTTP_AUTHORIZATION=f"Token {token.key}").status_code == 200  # tokens unchanged

    agent_client.post(SECURITY, {"action": "start"})
    device = TOTPDevice.objects.get(user=agent.user)
    agent_client.post(SECURITY, {"action": "confirm", "code": code_for(device)})
    assert agent_client.get(lists).status_code == 200
    # The administrator's page shows who has it.
    rows = {
        row.membership.user_id: row.two_factor for row in admin_client.get(account_page).context["members"]
    }
    assert rows == {member.user_id: True, agent.user_id: True}


def test_an_agent_cannot_require_it_and_a_member_of_another_account_has_no_history_here(member):
    agent = MembershipFactory(account=member.account, user=UserFactory(username="ben"))
    stranger = MembershipFactory(account=AccountFactory(), user=UserFactory(username="zed"))
    agent_client = Client()
    agent_client.force_login(agent.user)
    assert (
        agent_client.post(f"/app/accounts/{member.account_id}/security/", {"required": "on"}).status_code
        == 403
    )
    admin_client = Client()
    admin_client.force_login(member.user)
    base = f"/app/accounts/{member.account_id}/security/members/"
    assert admin_client.get(f"{base}{agent.user_id}/").status_code == 200
    assert admin_client.get(f"{base}{stranger.user_id}/").status_code == 404


def test_only_a_superuser_sees_devices_in_the_admin_and_never_their_secret(member):
    device = TOTPDevice.objects.create(user=member.user, name="authenticator", confirmed=True)
    staff = UserFactory(username="staffer", is_staff=True)
    MembershipFactory(account=member.account, user=staff, role=Membership.Role.ADMIN)
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    page = f"/admin/otp_totp/totpdevice/{device.pk}/change/"
    staff_client, root_client = Client(), Client()
    staff_client.force_login(staff)
    root_client.force_login(root)
    assert staff_client.get(page).status_code == 403
    shown = root_client.get(page)
    assert shown.status_code == 200
    assert device.key not in shown.content.decode()
    assert root_client.get(f"/admin/otp_totp/totpdevice/{device.pk}/config/").status_code in (302, 404)
    # Lost phone: the superuser deletes the authenticator, and the person signs in with the password again.
    root_client.post(f"/admin/otp_totp/totpdevice/{device.pk}/delete/", {"post": "yes"})
    assert not TOTPDevice.objects.filter(pk=device.pk).exists()


def test_the_people_page_shows_who_has_it_and_links_each_history(member):
    agent = MembershipFactory(account=member.account, user=UserFactory(username="ben"))
    TOTPDevice.objects.create(user=agent.user, name="authenticator", confirmed=True)
    TOTPDevice.objects.create(user=member.user, name="authenticator", confirmed=False)  # set-up not finished
    client = Client()
    client.force_login(member.user)
    page = client.get(f"/app/accounts/{member.account_id}/people/").content.decode()
    assert f'<tr data-member="{agent.user_id}">' in page
    assert page.count('data-two-factor="on"') == 1
    assert page.count('data-two-factor="off"') == 1
    assert f"/app/accounts/{member.account_id}/security/members/{agent.user_id}/" in page


def test_the_security_page_never_links_to_another_site(client, member):
    client.force_login(member.user)
    page = client.get(SECURITY + "?next=https://evil.example/steal")
    assert page.context["next"] == "/app/"
    assert 'href="https://evil.example' not in page.content.decode()
    assert client.get(SECURITY + "?next=/app/accounts/1/").context["next"] == "/app/accounts/1/"
