"""A stand-in for DNS: no DNS server can run in the test environment (only 127.0.0.1 is reachable), so tests
replace the policy's resolver function, `helpdesk.outbound.policy.resolve_host`, with a table. Everything
after resolution (the checks, the connection to the checked address) is the real code."""

from __future__ import annotations

import ipaddress
from collections import defaultdict, deque

import pytest

from helpdesk.outbound import HostNotResolved, policy


class FakeDNS:
    def __init__(self) -> None:
        self._answers: dict[str, deque[list[str]]] = defaultdict(deque)
        self.lookups: list[str] = []

    def answer(self, host: str, *addresses: str) -> None:
        """Queue one answer for `host`. Answers are used in order; the last one stays (a rebinding server
        gives a public answer first and a private one afterwards)."""
        self._answers[host].append(list(addresses))

    def resolve(self, host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
        self.lookups.append(host)
        try:
            return [ipaddress.ip_address(host)]  # an address literal needs no DNS
        except ValueError:
            pass
        queue = self._answers.get(host)
        if not queue:
            raise HostNotResolved("the host name does not resolve")
        addresses = queue.popleft() if len(queue) > 1 else queue[0]
        return [ipaddress.ip_address(address) for address in addresses]


@pytest.fixture
def dns(monkeypatch) -> FakeDNS:
    fake = FakeDNS()
    monkeypatch.setattr(policy, "resolve_host", fake.resolve)
    return fake


@pytest.fixture
def outbound_settings(settings):
    """Set the outbound policy's operator settings for one test (the suite allowlists 127.0.0.1 by default)."""

    def apply(
        *, allowed_hosts: list[str] | None = None, allow_http: bool = False, max_bytes: int | None = None
    ):
        values: dict[str, object] = {
            "OUTBOUND_ALLOWED_HOSTS": allowed_hosts or [],
            "OUTBOUND_ALLOW_HTTP": allow_http,
        }
        if max_bytes is not None:
            values["OUTBOUND_MAX_RESPONSE_BYTES"] = max_bytes
        settings.HELPDESK = {**settings.HELPDESK, **values}

    return apply
