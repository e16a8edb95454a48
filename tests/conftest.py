"""Test-wide fixtures: the loopback-only network guard, a real redis-server, factories."""

from __future__ import annotations

import os

import pytest

from tests.support import network_guard
from tests.support.servers import start_redis

network_guard.install()

# The suite's fake providers, callback receivers and model servers listen on http://127.0.0.1:<port>, which the
# outbound policy refuses unless the operator allowlists it. Worker processes that tests start read settings
# from the environment, so the allowlist goes there; the fixture below sets it for this process.
os.environ["HELPDESK_OUTBOUND_ALLOWED_HOSTS"] = "127.0.0.1"


@pytest.fixture(scope="session", autouse=True)
def redis_server():
    """One real redis-server for the session. The app is pointed at it before anything reads the Celery
    configuration, so `.delay()` from in-process code reaches the same broker as the test's worker processes."""
    from django.conf import settings

    from config import celery_app

    server = start_redis()
    settings.REDIS_URL = server.url
    settings.CELERY_BROKER_URL = server.url
    celery_app.conf.broker_url = server.url
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _no_auth_failure_limit_unless_asked(settings):
    """The suite sends thousands of forged webhooks from 127.0.0.1 on purpose (fuzzing, signature tests); the
    per-client limit on failed authentication would turn their 401s into 429s depending on test order. Its own
    tests set `WEBHOOK_AUTH_FAILURES_PER_MINUTE` explicitly."""
    settings.HELPDESK = {**settings.HELPDESK, "WEBHOOK_AUTH_FAILURES_PER_MINUTE": 0}


@pytest.fixture(autouse=True)
def _outbound_policy_allows_the_test_servers(settings):
    """In-process settings were loaded before this file ran. Tests of the policy set the allowlist themselves."""
    settings.HELPDESK = {**settings.HELPDESK, "OUTBOUND_ALLOWED_HOSTS": ["127.0.0.1"]}


@pytest.fixture
def redis_url(redis_server):
    """The test redis-server, flushed for each test that uses it."""
    import redis

    from captain.answering.services import locks

    redis.Redis.from_url(redis_server.url).flushdb()
    locks._client.cache_clear()
    yield redis_server.url
    locks._client.cache_clear()


@pytest.fixture
def fake_llm():
    """A scripted OpenAI-compatible server on 127.0.0.1; the app's model client points at it."""
    from captain.assistants.services import model_endpoints
    from tests.support.fake_llm_server import FakeLLMServer

    # SDK clients are cached per endpoint URL and key; a later test's server may reuse this port, and must not
    # inherit a pool of connections to this one.
    with FakeLLMServer() as server:
        yield server
    model_endpoints.operator_clients_clear()


@pytest.fixture
def llm_settings(fake_llm, settings):
    settings.CAPTAIN = {
        **settings.CAPTAIN,
        "OPENAI_BASE_URL": fake_llm.base_url,
        "OPENAI_API_KEY": "test",
        "LLM_TIMEOUT_SECONDS": 5.0,
        "LLM_MAX_RETRIES": 0,
    }
    return fake_llm
