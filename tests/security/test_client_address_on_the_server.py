"""The client address on the real web server, started with the command `scripts/run` uses (scripts/supervisor.py
`web_server_argv`, through tests.support.servers.start_web_server): DJANGO_TRUSTED_PROXY_COUNT is the only
authority on X-Forwarded-For. uvicorn trusts that header from 127.0.0.1 by default and rewrites the peer's
address before Django sees it, so a forger on this machine (or anything relaying through it) could give every
guess a new address and never be locked out. In-process tests (test_login_throttling.py, test_rate_limits.py)
cannot see that: the test client has no server in front of Django."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import httpx
import pytest

from tests.factories import InboxFactory, UserFactory
from tests.support.database import database_url_for_subprocess
from tests.support.servers import WebServer, start_web_server

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "pass-word-123"
LOGIN_LIMIT = 5  # the server's default (AXES_FAILURE_LIMIT)
WEBHOOK_FAILURE_LIMIT = 3


def serve(django_db_blocker, redis_url: str, log_dir, *, proxies: int) -> WebServer:
    with django_db_blocker.unblock():
        database_url = database_url_for_subprocess()
    return start_web_server(
        env={
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "DJANGO_TRUSTED_PROXY_COUNT": str(proxies),
            "HELPDESK_LOGIN_FAILURE_LIMIT": str(LOGIN_LIMIT),
            "HELPDESK_WEBHOOK_AUTH_FAILURE_LIMIT": str(WEBHOOK_FAILURE_LIMIT),
        },
        log_path=log_dir / "web.log",
    )


@pytest.fixture(scope="module")
def web(django_db_setup, django_db_blocker, redis_server, tmp_path_factory) -> Iterator[WebServer]:
    """No reverse proxy (the default): requests come straight from their peer, here 127.0.0.1."""
    server = serve(django_db_blocker, redis_server.url, tmp_path_factory.mktemp("web"), proxies=0)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def web_behind_a_proxy(
    django_db_setup, django_db_blocker, redis_server, tmp_path_factory
) -> Iterator[WebServer]:
    server = serve(django_db_blocker, redis_server.url, tmp_path_factory.mktemp("web-proxy"), proxies=1)
    yield server
    server.stop()


def sign_in(client: httpx.Client, web: WebServer, username: str, password: str, forwarded_for: str) -> int:
    """A sign-in through the real form (CSRF token and all), claiming to come from `forwarded_for`."""
    page = client.get(f"{web.url}/auth/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert token is not None, page.text[:500]
    return client.post(
        f"{web.url}/auth/login/",
        data={"username": username, "password": password, "csrfmiddlewaretoken": token.group(1)},
        headers={"X-Forwarded-For": forwarded_for},
    ).status_code


def forged_webhook(web: WebServer, token: str, forwarded_for: str) -> int:
    body = json.dumps({"message_id": "x", "contact": {"id": "c-1"}, "text": "spam"}).encode()
    return httpx.post(
        f"{web.url}/webhooks/api/{token}/",
        content=body,
        headers={
            "Content-Type": "application/json",
            "X-Helpdesk-Timestamp": "1",
            "X-Helpdesk-Signature": "sha256=" + "0" * 64,
            "X-Forwarded-For": forwarded_for,
        },
        timeout=10,
    ).status_code


def test_without_a_trusted_proxy_forged_forwarded_for_does_not_escape_the_sign_in_lockout(web, redis_url):
    UserFactory(username="bob", password=PASSWORD)
    with httpx.Client(timeout=20) as guesser:
        # A new username each time, so only the per-address lock can stop this; a new claimed address each time.
        failures = [sign_in(guesser, web, f"nobody{n}", "guess", f"203.0.113.{n}") for n in range(9)]
        after = sign_in(guesser, web, "bob", PASSWORD, "198.51.100.77")
    assert failures == [200] * (LOGIN_LIMIT - 1) + [429] * (9 - LOGIN_LIMIT + 1)
    assert after == 429  # the right password, from the locked address: refused, not signed in


def test_without_a_trusted_proxy_forged_forwarded_for_does_not_escape_the_webhook_failure_limit(
    web, redis_url
):
    inbox = InboxFactory(webhook_rate_limit_per_minute=100)
    statuses = [forged_webhook(web, inbox.webhook_token, f"203.0.113.{n}") for n in range(5)]
    assert statuses == [401] * WEBHOOK_FAILURE_LIMIT + [429, 429]


def test_behind_a_trusted_proxy_each_forwarded_client_is_counted_apart(web_behind_a_proxy, redis_url):
    """The server itself never rewrites the address: with DJANGO_TRUSTED_PROXY_COUNT=1 the entry the proxy (here
    127.0.0.1) appended is the client, whatever the client wrote to the left of it."""
    web, inbox = web_behind_a_proxy, InboxFactory(webhook_rate_limit_per_minute=100)
    one = [forged_webhook(web, inbox.webhook_token, f"192.0.2.{n}, 203.0.113.7") for n in range(5)]
    other = forged_webhook(web, inbox.webhook_token, "192.0.2.1, 198.51.100.9")
    assert one == [401] * WEBHOOK_FAILURE_LIMIT + [429, 429]
    assert other == 401
