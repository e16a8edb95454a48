"""`HELPDESK_OUTBOUND_ALLOWED_HOSTS` entries with a port: `host:port` (and `[IPv6]:port`) opens that one port of the
host, so allowlisting the demo's local callback receiver does not open every service on the machine (Redis on
6379 answered a tool's request when `127.0.0.1` meant every port). A bare `host` still means every port."""

from __future__ import annotations

import pytest
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

from helpdesk.outbound import OutboundRefused, check_url, outbound_client
from tests.helpdesk.outbound.raw_server import RawServer, http_answer, raw_answer

REDIS_BANNER = b"-ERR wrong number of arguments for 'get' command\r\n"


@pytest.fixture(autouse=True)
def _no_allowlist(outbound_settings):
    outbound_settings()


def test_a_host_port_entry_admits_that_port_and_refuses_the_others(outbound_settings):
    outbound_settings(allowed_hosts=["127.0.0.1:8081"])
    check_url("http://127.0.0.1:8081/v1")  # no exception: the listed port, plain http allowed for it
    check_url("https://127.0.0.1:8081/v1")
    with pytest.raises(OutboundRefused) as refused:
        check_url("http://127.0.0.1:6379/")
    assert str(refused.value) == "address is loopback and port 6379 is not allowlisted for it"
    with pytest.raises(OutboundRefused, match="port 80 is not allowlisted"):
        check_url("http://127.0.0.1/")  # the scheme's default port is a port like any other


def test_a_bare_host_entry_still_admits_every_port(outbound_settings):
    outbound_settings(allowed_hosts=["127.0.0.1"])
    check_url("http://127.0.0.1:8081/v1")
    check_url("http://127.0.0.1:6379/")


def test_a_host_name_entry_with_a_port_admits_that_port_only(dns, outbound_settings):
    outbound_settings(allowed_hosts=["Provider-Proxy.internal:8080"])
    dns.answer("provider-proxy.internal", "10.20.0.5")
    check_url("http://provider-proxy.internal:8080/")
    with pytest.raises(OutboundRefused, match="address is private and port 9000 is not allowlisted"):
        check_url("https://provider-proxy.internal:9000/")


def test_an_ipv6_entry_takes_its_port_in_brackets(outbound_settings):
    outbound_settings(allowed_hosts=["[::1]:8081"])
    check_url("http://[::1]:8081/v1")
    with pytest.raises(OutboundRefused, match="loopback and port 6379"):
        check_url("http://[::1]:6379/")
    outbound_settings(allowed_hosts=["::1"])  # without brackets: the address, every port
    check_url("http://[::1]:6379/")


def test_a_network_entry_with_a_port_admits_that_port_in_the_network(outbound_settings):
    outbound_settings(allowed_hosts=["10.20.0.0/16:443"])
    check_url("https://10.20.9.9/")
    with pytest.raises(OutboundRefused, match="private and port 8443"):
        check_url("https://10.20.9.9:8443/")


def test_plain_http_to_an_unlisted_port_of_a_listed_host_says_which_port(outbound_settings):
    outbound_settings(allowed_hosts=["127.0.0.1:8081"])
    with outbound_client(timeout=5) as client, pytest.raises(OutboundRefused) as refused:
        client.get("http://127.0.0.1:6379/")
    assert "plain http is not allowed" in str(refused.value) and "port 6379" in str(refused.value)


@pytest.mark.parametrize("entry", ["127.0.0.1:http", "127.0.0.1:0", "127.0.0.1:65536", "[::1", "[::1]8081"])
def test_a_malformed_entry_stops_with_a_configuration_error_naming_it(outbound_settings, entry):
    outbound_settings(allowed_hosts=[entry])
    with pytest.raises(ImproperlyConfigured, match="HELPDESK_OUTBOUND_ALLOWED_HOSTS") as invalid:
        check_url("https://93.184.216.34/")
    assert repr(entry) in str(invalid.value)


def test_a_malformed_entry_fails_the_system_checks_at_start_up(outbound_settings):
    """`manage.py migrate` (scripts/run's first step) and `check` stop on it, before any tenant URL is tried."""
    outbound_settings(allowed_hosts=["127.0.0.1:8081", "127.0.0.1:redis"])
    [error] = [e for e in checks.run_checks() if e.id == "helpdesk.E001"]
    assert error.level == checks.ERROR and "'127.0.0.1:redis'" in error.msg
    outbound_settings(allowed_hosts=["127.0.0.1:8081", "[::1]:8081", "proxy.internal"])
    assert not [e for e in checks.run_checks() if e.id == "helpdesk.E001"]


def test_the_listed_port_is_reached_and_a_redis_like_port_is_not(outbound_settings):
    """Real servers on 127.0.0.1: only the listed port is ever connected to."""
    with (
        RawServer(http_answer(200, b"pong")) as allowed,
        RawServer(raw_answer(REDIS_BANNER)) as redis_like,
    ):
        outbound_settings(allowed_hosts=[f"127.0.0.1:{allowed.port}"])
        with outbound_client(timeout=5) as client:
            assert client.get(allowed.url).content == b"pong"
            with pytest.raises(OutboundRefused, match=f"port {redis_like.port} is not allowlisted"):
                client.get(f"https://127.0.0.1:{redis_like.port}/")
        assert len(allowed.requests) == 1 and redis_like.requests == []
