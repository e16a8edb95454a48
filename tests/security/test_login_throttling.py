"""Sign-in throttling (django-axes, config.login_throttle): N failures lock the username from anywhere and,
separately, the client address for any username; a success clears that user's failures; the lock lifts after
the cool-off. The dashboard sign-in and the admin's. Attempts live in the test database, so each test starts
with none."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.test import Client, RequestFactory

from config.login_throttle import client_ip
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "pass-word-123"
LOGIN = "/auth/login/"
ADMIN_LOGIN = "/admin/login/"
LIMIT = settings.AXES_FAILURE_LIMIT


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """Every attempt here checks a password; PBKDF2's production cost (about 0.7 s each on this machine) is
    not what these tests are about."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def users():
    return {name: UserFactory(username=name) for name in ("alice", "bob", "mallory")}


def sign_in(client: Client, username: str, password: str, *, url: str = LOGIN, ip: str = "127.0.0.1"):
    return client.post(url, {"username": username, "password": password}, REMOTE_ADDR=ip)


def signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def test_the_limit_is_five_by_default():
    assert LIMIT == 5


def test_wrong_passwords_lock_the_username_even_for_the_right_password_then_the_client_too(users):
    client = Client()
    for _ in range(LIMIT - 1):
        assert sign_in(client, "alice", "wrong").status_code == 200  # the form again, with its error

    locked = sign_in(client, "alice", "wrong")
    assert locked.status_code == 429
    assert b"Too many sign-in attempts" in locked.content
    assert b"Try again in 15 minutes" in locked.content

    assert sign_in(client, "alice", PASSWORD).status_code == 429
    assert not signed_in(client)
    # The same client on another username: refused by the per-address lock, right password or not.
    assert sign_in(client, "bob", PASSWORD).status_code == 429
    assert not signed_in(client)
    # The username is locked from any address; another client's own account is not.
    elsewhere = Client()
    assert sign_in(elsewhere, "alice", PASSWORD, ip="198.51.100.7").status_code == 429
    assert sign_in(elsewhere, "bob", PASSWORD, ip="198.51.100.7").status_code == 302
    assert signed_in(elsewhere)


def test_failures_from_one_client_on_many_usernames_lock_that_client(users):
    client = Client()
    for n in range(LIMIT - 1):
        assert sign_in(client, f"nobody{n}", "guess").status_code == 200
    assert sign_in(client, "nobody-else", "guess").status_code == 429
    assert sign_in(client, "bob", PASSWORD).status_code == 429
    assert sign_in(Client(), "bob", PASSWORD, ip="198.51.100.7").status_code == 302


def test_a_success_clears_the_failures(users):
    client = Client()
    for _ in range(LIMIT - 1):
        sign_in(client, "alice", "wrong")
    assert sign_in(client, "alice", PASSWORD).status_code == 302
    client.post("/auth/logout/")

    for _ in range(LIMIT - 1):
        assert sign_in(client, "alice", "wrong").status_code == 200
    assert sign_in(client, "alice", PASSWORD).status_code == 302
    assert signed_in(client)


def test_another_users_success_does_not_clear_the_failures_against_a_username(users):
    """Axes' own reset would delete every failure from the address: a guesser with an account of their own
    could sign in between guesses and never reach the limit."""
    guesser = Client()
    for _ in range(LIMIT - 1):
        sign_in(guesser, "alice", "wrong")
    assert sign_in(guesser, "mallory", PASSWORD).status_code == 302
    guesser.post("/auth/logout/")

    assert sign_in(guesser, "alice", "wrong").status_code == 429
    assert sign_in(Client(), "alice", PASSWORD, ip="198.51.100.7").status_code == 429


def test_the_lock_lifts_after_the_cool_off(users):
    client = Client()
    for _ in range(LIMIT):
        sign_in(client, "alice", "wrong")
    assert sign_in(client, "alice", PASSWORD).status_code == 429

    # Time passes: the last failure is now older than the cool-off.
    AccessAttempt.objects.update(
        attempt_time=AccessAttempt.objects.get().attempt_time - timedelta(minutes=16)
    )
    assert sign_in(client, "alice", PASSWORD).status_code == 302
    assert signed_in(client)


def test_the_admin_sign_in_is_the_throttled_dashboard_one(users):
    """The admin's own login form has no two-factor step, so /admin/login/ sends to ours (with `next`): one
    throttled form for both."""
    admin = UserFactory(username="root", is_staff=True, is_superuser=True)
    client = Client()
    sent = client.get(ADMIN_LOGIN + "?next=/admin/helpdesk/inbox/")
    assert sent.status_code == 302
    assert sent["Location"] == "/auth/login/?next=%2Fadmin%2Fhelpdesk%2Finbox%2F"
    # A form posted at the admin's address signs nobody in either.
    assert sign_in(client, admin.username, PASSWORD, url=ADMIN_LOGIN).status_code == 302
    assert not signed_in(client)

    for _ in range(LIMIT - 1):
        assert sign_in(client, admin.username, "wrong").status_code == 200
    assert sign_in(client, admin.username, "wrong").status_code == 429
    assert sign_in(client, admin.username, PASSWORD).status_code == 429
    assert client.get("/admin/").status_code == 302  # still sent to the login page


def test_no_password_is_stored_with_the_failures(users):
    sign_in(Client(), "alice", "my-secret-guess")
    attempt = AccessAttempt.objects.get()
    assert attempt.username == "alice"
    assert "my-secret-guess" not in attempt.post_data


def test_behind_a_proxy_the_client_is_the_address_the_proxy_saw(users, settings):
    """With DJANGO_TRUSTED_PROXY_COUNT=1 every request comes from the proxy's address; locking that would lock
    everyone. The address a client writes into X-Forwarded-For itself is ignored."""
    settings.TRUSTED_PROXY_COUNT = 1
    proxy = "10.0.0.2"

    def via_proxy(client: Client, username: str, password: str, forwarded_for: str):
        return client.post(
            LOGIN,
            {"username": username, "password": password},
            REMOTE_ADDR=proxy,
            HTTP_X_FORWARDED_FOR=forwarded_for,
        )

    guesser = Client()
    for n in range(LIMIT):
        # A forged leftmost entry changes on every try; the proxy's own entry (rightmost) does not.
        via_proxy(guesser, f"nobody{n}", "guess", f"192.0.2.{n}, 203.0.113.7")
    assert via_proxy(guesser, "bob", PASSWORD, "203.0.113.7").status_code == 429
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"203.0.113.7"}

    someone_else = Client()
    assert via_proxy(someone_else, "bob", PASSWORD, "198.51.100.9").status_code == 302


def test_without_a_trusted_proxy_x_forwarded_for_is_ignored(users):
    client = Client()
    for n in range(LIMIT):
        client.post(
            LOGIN,
            {"username": f"nobody{n}", "password": "guess"},
            REMOTE_ADDR="127.0.0.1",
            HTTP_X_FORWARDED_FOR=f"192.0.2.{n}",
        )
    assert sign_in(client, "bob", PASSWORD).status_code == 429


@pytest.mark.parametrize(
    ("proxies", "forwarded_for", "client"),
    [
        (0, "192.0.2.1", "10.0.0.2"),  # no trusted proxy: the header is the client's word only
        (1, "192.0.2.1, 203.0.113.7", "203.0.113.7"),
        (2, "192.0.2.1, 203.0.113.7, 10.0.0.1", "203.0.113.7"),
        (1, "2001:db8::7", "2001:db8::7"),
        (2, "203.0.113.7", "10.0.0.2"),  # fewer entries than proxies: misconfigured, use the peer
        (1, "not-an-address", "10.0.0.2"),
        (1, "", "10.0.0.2"),
    ],
)
def test_client_address(settings, proxies, forwarded_for, client):
    settings.TRUSTED_PROXY_COUNT = proxies
    request = RequestFactory().post(LOGIN, REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR=forwarded_for)
    assert client_ip(request) == client
