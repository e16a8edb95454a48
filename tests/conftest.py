"""Test-wide fixtures: the loopback-only network guard, a real redis-server, factories."""

from __future__ import annotations

import pytest

from tests.support import network_guard
from tests.support.servers import start_redis

network_guard.install()


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


@pytest.fixture
def redis_url(redis_server):
    """The test redis-server, flushed for each test that uses it."""
    import redis

    from captain.services import locks

    redis.Redis.from_url(redis_server.url).flushdb()
    locks._client.cache_clear()
    yield redis_server.url
    locks._client.cache_clear()


@pytest.fixture
def fake_llm():
    """A scripted OpenAI-compatible server on 127.0.0.1; the app's model client points at it."""
    from captain.services import model_client
    from tests.support.fake_llm_server import FakeLLMServer

    with FakeLLMServer() as server:
        model_client.model_client.cache_clear()
        yield server
    model_client.model_client.cache_clear()


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
