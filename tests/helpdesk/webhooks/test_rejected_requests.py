"""Requests that fail before authentication store nothing, not even a span (anyone can send them, so one row
each would let anyone fill the database); they are counted in a metric and a sampled log line instead."""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from captain.answering.models import SpanRecord
from helpdesk import tracing
from helpdesk.channels.api_channel import signed_headers
from helpdesk.channels.telegram import SECRET_HEADER
from helpdesk.models import Inbox
from helpdesk.services import rate_limits
from tests.factories import InboxFactory
from tests.support.webhook_fixtures import fixture_json

pytestmark = pytest.mark.django_db

N = 6
PINNED_NOW = 1_718_000_000.0 - (1_718_000_000.0 % 60) + 30  # mid-minute: a test's requests share one window

Counts = Callable[[], Counter[tuple[str, str]]]


@pytest.fixture(autouse=True)
def pinned_clock(monkeypatch):
    monkeypatch.setattr(rate_limits, "_now", lambda: PINNED_NOW)
    monkeypatch.setattr(rate_limits, "_paused_until", {})


@pytest.fixture
def rejections(monkeypatch) -> Counts:
    """The rejection counter on a real SDK MeterProvider read in memory: {(channel, reason): requests}."""
    reader = InMemoryMetricReader()
    monkeypatch.setattr(tracing, "webhook_rejections", tracing.rejection_counter(MeterProvider([reader])))
    monkeypatch.setattr(tracing, "rejection_log", tracing.SampledRejectionLog())

    def counts() -> Counter[tuple[str, str]]:
        found: Counter[tuple[str, str]] = Counter()
        data = reader.get_metrics_data()
        for resource in data.resource_metrics if data else []:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    assert metric.name == tracing.METRIC_WEBHOOK_REJECTED
                    for point in metric.data.data_points:
                        key = (point.attributes[tracing.ATTR_CHANNEL], point.attributes[tracing.ATTR_REASON])
                        found[key] += point.value
        return found

    return counts


def api_body(n: int) -> bytes:
    return json.dumps({"message_id": f"m-{n}", "contact": {"id": "c-1"}, "text": f"message {n}"}).encode()


def post_api(client, token: str, body: bytes, headers: dict[str, str]):
    return client.post(f"/webhooks/api/{token}/", data=body, content_type="application/json", headers=headers)


def post_telegram(client, inbox: Inbox, n: int, secret: str | None):
    update = fixture_json("telegram", "text_message")
    update["update_id"] = n
    headers = {} if secret is None else {SECRET_HEADER: secret}
    return client.post(
        f"/webhooks/telegram/{inbox.webhook_token}/",
        data=json.dumps(update).encode(),
        content_type="application/json",
        headers=headers,
    )


def test_unsigned_api_requests_store_no_span_and_are_counted(client, redis_url, rejections):
    inbox = InboxFactory()
    statuses = {post_api(client, inbox.webhook_token, api_body(n), {}).status_code for n in range(N)}

    assert statuses == {401}
    assert SpanRecord.objects.count() == 0
    assert rejections() == {("api", "signature_missing"): N}


def test_forged_api_signatures_store_no_span_and_are_counted(client, redis_url, rejections):
    inbox = InboxFactory()
    responses = [
        post_api(client, inbox.webhook_token, api_body(n), signed_headers("not-the-secret", api_body(n)))
        for n in range(N)
    ]

    assert {r.status_code for r in responses} == {401}
    assert SpanRecord.objects.count() == 0
    assert rejections() == {("api", "signature_invalid"): N}


@pytest.mark.parametrize(("secret", "reason"), [(None, "signature_missing"), ("wrong", "signature_invalid")])
def test_unauthenticated_provider_requests_store_no_span_and_are_counted(
    client, redis_url, rejections, secret, reason
):
    inbox = InboxFactory(channel_type=Inbox.ChannelType.TELEGRAM)
    statuses = {post_telegram(client, inbox, n, secret).status_code for n in range(N)}

    assert statuses == {401}
    assert SpanRecord.objects.count() == 0
    assert rejections() == {("telegram", reason): N}


def test_unknown_inbox_tokens_store_no_span_and_are_counted(client, redis_url, rejections):
    statuses = {
        post_api(client, f"no-such-token-{n}", api_body(n), signed_headers("x", api_body(n))).status_code
        for n in range(N)
    }

    assert statuses == {404}
    assert SpanRecord.objects.count() == 0
    assert rejections() == {("api", "unknown_inbox"): N}


def test_rate_limited_requests_store_no_span_and_are_counted(client, redis_url, rejections):
    inbox = InboxFactory(webhook_rate_limit_per_minute=1)
    statuses = [
        post_api(
            client, inbox.webhook_token, api_body(n), signed_headers(inbox.secret, api_body(n))
        ).status_code
        for n in range(N + 1)
    ]

    assert statuses == [200] + [429] * N
    assert SpanRecord.objects.filter(name=tracing.SPAN_WEBHOOK).count() == 1  # the accepted one
    assert rejections() == {("api", "rate_limited"): N}


def test_failed_authentications_past_the_client_limit_store_no_span_and_are_counted(
    client, redis_url, settings, rejections
):
    settings.HELPDESK = {**settings.HELPDESK, "WEBHOOK_AUTH_FAILURES_PER_MINUTE": 2}
    inbox = InboxFactory()
    statuses = [post_api(client, inbox.webhook_token, api_body(n), {}).status_code for n in range(N)]

    assert statuses == [401, 401] + [429] * (N - 2)
    assert SpanRecord.objects.count() == 0
    assert rejections() == {("api", "signature_missing"): 2, ("api", "auth_failures_limited"): N - 2}


def test_accepted_request_keeps_its_webhook_span(client, redis_url, rejections):
    inbox = InboxFactory()
    response = post_api(client, inbox.webhook_token, api_body(1), signed_headers(inbox.secret, api_body(1)))

    assert response.status_code == 200
    span = SpanRecord.objects.get(name=tracing.SPAN_WEBHOOK)
    assert span.attributes[tracing.ATTR_INBOX_ID] == inbox.id
    assert span.attributes[tracing.ATTR_MESSAGE_ID] == response.json()["message_ids"][0]
    assert rejections() == {}


def test_rejections_are_logged_once_per_interval_without_token_or_signature(
    client, redis_url, rejections, caplog, monkeypatch
):
    inbox = InboxFactory()
    forged = signed_headers("not-the-secret", api_body(1))
    with caplog.at_level(logging.INFO, logger="helpdesk"):
        for _ in range(N):
            post_api(client, inbox.webhook_token, api_body(1), forged)

    lines = [r.getMessage() for r in caplog.records if "rejected" in r.getMessage()]
    assert len(lines) == 1  # a flood of forged requests cannot flood the log either
    assert "signature_invalid" in lines[0]
    for secret in (inbox.webhook_token, *forged.values()):
        assert secret not in lines[0]

    caplog.clear()
    monkeypatch.setattr(tracing, "_monotonic", lambda: 10**9)  # the interval has passed
    with caplog.at_level(logging.INFO, logger="helpdesk"):
        post_api(client, inbox.webhook_token, api_body(1), forged)
    [line] = [r.getMessage() for r in caplog.records if "rejected" in r.getMessage()]
    assert f"{N} request(s)" in line  # the suppressed ones are reported, not lost
