"""`outbound_client` against real servers on 127.0.0.1: the address check at connection time (DNS rebinding),
redirects, the response size limit, the total time limit, and the openai SDK using it."""

from __future__ import annotations

import gzip
import time

import httpx
import openai
import pytest

from helpdesk.outbound import OutboundRefused, ResponseTooLarge, check_url, outbound_client
from tests.helpdesk.outbound.raw_server import (
    RawServer,
    dripping_answer,
    http_answer,
    unsized_answer,
)
from tests.support import fake_llm_server as fake

PUBLIC = "93.184.216.34"


def test_an_allowlisted_server_is_reached_and_asked_for_an_uncompressed_body(outbound_settings):
    outbound_settings(allowed_hosts=["127.0.0.1"])
    with RawServer(http_answer(200, b"pong")) as server, outbound_client(timeout=5) as client:
        response = client.post(server.url, json={"ping": 1})
    assert (response.status_code, response.content) == (200, b"pong")
    assert b"accept-encoding: identity" in server.requests[0].lower()


def test_a_loopback_server_is_not_reached_without_the_allowlist(outbound_settings):
    outbound_settings(allow_http=True)
    with (
        RawServer(http_answer(200, b"pong")) as server,
        outbound_client(timeout=5) as client,
        pytest.raises(OutboundRefused, match="address is loopback"),
    ):
        client.get(server.url)
    assert server.requests == []


def test_plain_http_is_refused_per_request_without_the_switch(outbound_settings):
    outbound_settings()
    with outbound_client(timeout=5) as client, pytest.raises(OutboundRefused, match="plain http"):
        client.get("http://hooks.example.com/")


def test_a_name_that_passed_on_save_and_resolves_to_a_private_address_at_send_time_is_refused(
    dns, outbound_settings
):
    """DNS rebinding: the check on save saw a public address; the connection re-resolves, checks and refuses.
    (Were it not refused, the network guard would raise RemoteNetworkBlocked for 10.0.0.5 instead.)"""
    outbound_settings()
    dns.answer("hooks.example.com", PUBLIC)
    dns.answer("hooks.example.com", "10.0.0.5")
    check_url("https://hooks.example.com/cb")  # no exception: saved
    with outbound_client(timeout=5) as client, pytest.raises(OutboundRefused, match="address is private"):
        client.post("https://hooks.example.com/cb", json={})
    assert dns.lookups == ["hooks.example.com", "hooks.example.com"]


def test_the_connection_goes_to_the_checked_address_and_keeps_the_host_name(dns, outbound_settings):
    """The name exists only in our resolver, so the request can only arrive through the checked address."""
    outbound_settings(allowed_hosts=["127.0.0.0/8"], allow_http=True)
    dns.answer("hooks.example.test", "127.0.0.1")
    with RawServer(http_answer(204)) as server, outbound_client(timeout=5) as client:
        response = client.get(f"http://hooks.example.test:{server.port}/cb")
    assert response.status_code == 204
    assert f"host: hooks.example.test:{server.port}".encode() in server.requests[0].lower()


@pytest.mark.parametrize(
    ("location", "reason"),
    [
        ("https://169.254.169.254/latest/meta-data/iam/", "address is a cloud metadata service"),
        ("http://10.0.0.1/admin", "plain http is not allowed"),
        ("https://[::1]:6379/", "address is loopback"),
    ],
)
def test_redirects_are_not_followed_and_a_hop_to_a_refused_address_is_refused(
    outbound_settings, location, reason
):
    outbound_settings(allowed_hosts=["127.0.0.1"])
    with (
        RawServer(http_answer(302, headers={"Location": location})) as server,
        outbound_client(timeout=5) as client,
    ):
        assert client.get(server.url).status_code == 302  # the client follows nothing by itself
        with pytest.raises(OutboundRefused, match=reason):
            client.get(server.url, follow_redirects=True)  # a caller who asks: each hop is checked


def test_a_body_past_the_size_limit_stops_being_read(outbound_settings):
    outbound_settings(allowed_hosts=["127.0.0.1"], max_bytes=64 * 1024)
    with (
        RawServer(unsized_answer(b"x" * (2 * 1024 * 1024))) as server,
        outbound_client(timeout=5) as client,
        pytest.raises(ResponseTooLarge, match="larger than 65536 bytes"),
    ):
        client.get(server.url)


def test_a_declared_length_past_the_limit_is_refused_before_reading(outbound_settings):
    outbound_settings(allowed_hosts=["127.0.0.1"])
    with RawServer(http_answer(200, b"y" * 5000)) as server:
        with (
            outbound_client(timeout=5, max_response_bytes=4999) as client,
            pytest.raises(ResponseTooLarge, match="larger than 4999 bytes"),
        ):
            client.get(server.url)
        with outbound_client(timeout=5, max_response_bytes=5000) as client:
            assert len(client.get(server.url).content) == 5000  # exactly the limit is fine


def test_a_compressed_body_is_refused_since_its_real_size_is_unknown(outbound_settings):
    outbound_settings(allowed_hosts=["127.0.0.1"])
    bomb = gzip.compress(b"\0" * (20 * 1024 * 1024))  # 20 KB on the wire, 20 MB decoded
    with (
        RawServer(http_answer(200, bomb, {"Content-Encoding": "gzip"})) as server,
        outbound_client(timeout=5) as client,
        pytest.raises(ResponseTooLarge, match="compressed"),
    ):
        client.get(server.url)


def test_the_timeout_bounds_the_whole_request_not_each_read(outbound_settings):
    """A byte every 0.2 s never trips a 1 s read timeout; the total limit ends the request anyway."""
    outbound_settings(allowed_hosts=["127.0.0.1"])
    with RawServer(dripping_answer(seconds=15)) as server, outbound_client(timeout=1) as client:
        started = time.monotonic()
        with pytest.raises(httpx.ReadTimeout):
            client.get(server.url)
        elapsed = time.monotonic() - started
    assert elapsed < 2.5


def test_the_openai_sdk_works_through_the_client(outbound_settings):
    outbound_settings(allowed_hosts=["127.0.0.1"])
    with fake.FakeLLMServer([fake.text("Hello from the model.")]) as server:
        sdk = openai.OpenAI(
            base_url=server.base_url, api_key="test", max_retries=0, http_client=outbound_client(timeout=5)
        )
        completion = sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert completion.choices[0].message.content == "Hello from the model."


def test_the_openai_sdk_lets_the_policy_refusal_through(dns, outbound_settings):
    """openai 3.x turns only httpx errors into APIConnectionError (and retries those); a refusal is not one,
    so the caller sees OutboundRefused itself, and nothing is retried."""
    outbound_settings()
    dns.answer("llm.example.com", "10.9.8.7")
    sdk = openai.OpenAI(
        base_url="https://llm.example.com/v1",
        api_key="test",
        max_retries=2,
        http_client=outbound_client(timeout=5),
    )
    with pytest.raises(OutboundRefused, match="address is private"):
        sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert dns.lookups == ["llm.example.com"]
