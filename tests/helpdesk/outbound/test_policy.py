"""The URL rules: schemes, credentials, the operator's allowlist and http switch, several addresses per host."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest
from django.core.exceptions import ValidationError

from helpdesk.outbound import HostNotResolved, OutboundRefused, check_url, policy, validate_outbound_url
from tests.support.servers import ROOT

PUBLIC = "93.184.216.34"


@pytest.fixture(autouse=True)
def _no_allowlist(outbound_settings):
    outbound_settings()


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://files.example.com/x",
        "gopher://example.com:70/_",
        "dict://example.com:11211/",
        "ldap://example.com/",
        "javascript:alert(1)",
    ],
)
def test_schemes_other_than_http_and_https_are_refused(dns, url):
    with pytest.raises(OutboundRefused, match="is not allowed, only https"):
        check_url(url)
    assert dns.lookups == []  # refused before any lookup


@pytest.mark.parametrize("url", ["/relative/path", "hooks.example.com/cb", "", "https:///cb"])
def test_a_url_without_scheme_or_host_is_refused(url):
    with pytest.raises(OutboundRefused):
        check_url(url)


def test_https_to_a_public_host_is_allowed(dns):
    dns.answer("hooks.example.com", PUBLIC, "2606:2800:220:1:248:1893:25c8:1946")
    check_url("https://hooks.example.com/cb")  # no exception: the URL is acceptable
    assert dns.lookups == ["hooks.example.com"]


def test_plain_http_is_refused_unless_the_operator_allows_it(dns, outbound_settings):
    dns.answer("hooks.example.com", PUBLIC)
    with pytest.raises(OutboundRefused, match="plain http is not allowed"):
        check_url("http://hooks.example.com/cb")
    outbound_settings(allow_http=True)
    check_url("http://hooks.example.com/cb")  # the operator's switch: http for every public host


def test_the_http_switch_does_not_open_private_addresses(dns, outbound_settings):
    outbound_settings(allow_http=True)
    dns.answer("redis.internal", "10.0.0.7")
    with pytest.raises(OutboundRefused, match="address is private"):
        check_url("http://redis.internal:6379/")


def test_credentials_in_the_url_are_refused_and_not_repeated(dns):
    dns.answer("hooks.example.com", PUBLIC)
    with pytest.raises(OutboundRefused) as refused:
        check_url("https://admin:hunter2@hooks.example.com/cb")
    assert str(refused.value) == "credentials in the URL are not allowed"


def test_the_reason_never_contains_the_path_or_query(dns):
    """A Telegram bot token sits in the URL's path; the reason is shown to people."""
    dns.answer("api.internal", "10.1.1.1")
    with pytest.raises(OutboundRefused) as refused:
        check_url("https://api.internal/bot123456:SECRET-TOKEN/sendMessage?key=SECRET-KEY")
    assert "SECRET" not in str(refused.value)
    assert str(refused.value) == "address is private"


def test_a_host_with_one_refused_address_among_several_is_refused(dns):
    dns.answer("mixed.example.com", PUBLIC, "127.0.0.1")
    with pytest.raises(OutboundRefused, match="address is loopback"):
        check_url("https://mixed.example.com/")


def test_a_host_that_does_not_resolve_is_refused_on_save(dns):
    with pytest.raises(HostNotResolved, match="does not resolve"):
        check_url("https://hooks.exmaple.com/cb")


def test_an_allowlisted_host_name_may_be_private_and_use_http(dns, outbound_settings):
    outbound_settings(allowed_hosts=["Provider-Proxy.internal"])
    dns.answer("provider-proxy.internal", "10.20.0.5")
    check_url("http://provider-proxy.internal:8080/")  # case-insensitive match; http allowed for it
    dns.answer("other.internal", "10.20.0.6")
    with pytest.raises(OutboundRefused, match="address is private"):
        check_url("https://other.internal/")


def test_an_allowlisted_network_admits_any_host_resolving_into_it(dns, outbound_settings):
    outbound_settings(allowed_hosts=["10.20.0.0/16"])
    dns.answer("a.internal", "10.20.3.4")
    check_url("https://a.internal/")
    check_url("http://10.20.9.9/")  # an address literal inside the network may use http too
    with pytest.raises(OutboundRefused, match="plain http"):
        check_url("http://a.internal/")  # http needs the host itself listed (or the global switch)
    dns.answer("b.internal", "10.30.0.1")
    with pytest.raises(OutboundRefused, match="address is private"):
        check_url("https://b.internal/")


def test_allowlisting_127_0_0_1_does_not_allow_other_loopback_addresses(outbound_settings):
    outbound_settings(allowed_hosts=["127.0.0.1"])
    check_url("http://127.0.0.1:8081/v1")
    with pytest.raises(OutboundRefused, match="loopback"):
        check_url("https://127.0.0.2/")
    with pytest.raises(OutboundRefused, match="loopback"):
        check_url("https://[::1]/")


def test_validator_gives_a_clear_validation_error():
    with pytest.raises(ValidationError) as invalid:
        validate_outbound_url("http://169.254.169.254/latest/meta-data/")
    assert invalid.value.messages == [
        "This URL is refused by the outbound policy: address is a cloud metadata service."
    ]
    assert invalid.value.code == "outbound_refused"


PRINT_OUTBOUND = """
import django, json
django.setup()
from django.conf import settings
print(json.dumps({k: v for k, v in settings.HELPDESK.items() if k.startswith("OUTBOUND_")}))
"""


def test_operator_settings_come_from_the_environment():
    """Worker processes get the policy from the environment, the way the test suite and scripts/run set it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HELPDESK_")}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        HELPDESK_OUTBOUND_ALLOWED_HOSTS=" 127.0.0.1, provider-proxy.internal ,,10.0.0.0/8",
        HELPDESK_OUTBOUND_ALLOW_HTTP="1",
        HELPDESK_OUTBOUND_MAX_RESPONSE_BYTES="4096",
    )
    out = subprocess.run(
        [sys.executable, "-c", PRINT_OUTBOUND], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {
        "OUTBOUND_ALLOWED_HOSTS": ["127.0.0.1", "provider-proxy.internal", "10.0.0.0/8"],
        "OUTBOUND_ALLOW_HTTP": True,
        "OUTBOUND_MAX_RESPONSE_BYTES": 4096,
    }


def test_a_resolver_that_does_not_answer_is_given_up_on_at_the_bound(monkeypatch):
    # glibc would wait timeout x attempts x name servers; a save or a send waits DNS_TIMEOUT_SECONDS at most.
    def slow(*args, **kwargs):
        time.sleep(3)
        return []

    monkeypatch.setattr(policy.socket, "getaddrinfo", slow)
    started = time.monotonic()
    with pytest.raises(HostNotResolved, match=r"did not resolve within 0\.3 s"):
        policy.resolve_host("slow.example", 443, timeout=0.3)
    assert time.monotonic() - started < 1.5


def test_the_resolvers_answers_and_failures_come_through(monkeypatch):
    answers = [
        (2, 1, 6, "", ("93.184.216.34", 443)),
        (2, 1, 6, "", ("93.184.216.34", 443)),
        (10, 1, 6, "", ("2606:2800::1", 443, 0, 0)),
    ]
    monkeypatch.setattr(policy.socket, "getaddrinfo", lambda *a, **k: answers)
    assert [str(a) for a in policy.resolve_host("example.com", 443)] == ["93.184.216.34", "2606:2800::1"]

    def fails(*args, **kwargs):
        raise socket.gaierror(-2, "Name or service not known")

    monkeypatch.setattr(policy.socket, "getaddrinfo", fails)
    with pytest.raises(HostNotResolved, match="does not resolve"):
        policy.resolve_host("typo.example", 443)
