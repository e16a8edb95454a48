"""Which addresses a tenant's URL may reach: the classification table, and the same through `check_url`."""

from __future__ import annotations

import ipaddress

import pytest

from helpdesk.outbound import OutboundRefused, check_url
from helpdesk.outbound.addresses import refusal_reason

REFUSED = {
    "127.0.0.1": "loopback",
    "127.8.9.10": "loopback",
    "10.1.2.3": "private",
    "172.16.0.1": "private",
    "172.31.255.254": "private",
    "192.168.1.1": "private",
    "169.254.169.254": "a cloud metadata service",
    "169.254.170.2": "a cloud metadata service",
    "100.100.100.200": "a cloud metadata service",
    "168.63.129.16": "a cloud metadata service",  # Azure WireServer: not in any non-global range
    "169.254.1.1": "link-local",
    "0.0.0.0": "unspecified",
    "100.64.0.1": "shared (100.64.0.0/10)",
    "100.127.255.254": "shared (100.64.0.0/10)",
    "224.0.0.1": "multicast",  # Python 3.11.7 calls it global
    "239.255.255.250": "multicast",
    "::1": "loopback",
    "::": "unspecified",
    "fe80::1": "link-local",
    "fc00::1": "private",
    "fd12:3456::1": "private",
    "fd00:ec2::254": "a cloud metadata service",
    "fec0::1": "site-local",  # Python 3.11.7 calls it global
    "ff02::1": "multicast",
    "::ffff:127.0.0.1": "loopback (IPv4-mapped)",
    "::ffff:10.0.0.1": "private (IPv4-mapped)",
    "::ffff:169.254.169.254": "a cloud metadata service (IPv4-mapped)",
    "2002:7f00:1::1": "loopback (6to4)",
    "2002:a9fe:a9fe::1": "a cloud metadata service (6to4)",
    "64:ff9b::a00:1": "private (NAT64)",
    "64:ff9b::7f00:1": "loopback (NAT64)",
}
# Refused everywhere, though Python's label for them has moved between releases.
REFUSED_ANY_REASON = ["240.0.0.1", "255.255.255.255", "192.0.2.1", "198.18.0.1", "::7f00:1", "2001:db8::1"]
ALLOWED = [
    "93.184.216.34",
    "8.8.8.8",
    "1.1.1.1",
    "2606:4700:4700::1111",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
]


def url_for(address: str) -> str:
    return f"https://[{address}]/" if ":" in address else f"https://{address}/"


@pytest.mark.parametrize(("address", "reason"), REFUSED.items())
def test_refused_address_and_its_reason(address, reason):
    assert refusal_reason(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize("address", REFUSED_ANY_REASON)
def test_other_non_global_addresses_are_refused(address):
    assert refusal_reason(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize("address", ALLOWED)
def test_public_addresses_are_allowed(address):
    assert refusal_reason(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(("address", "reason"), REFUSED.items())
def test_check_url_refuses_an_address_literal_with_its_reason(settings, address, reason):
    settings.HELPDESK = {**settings.HELPDESK, "OUTBOUND_ALLOWED_HOSTS": []}
    with pytest.raises(OutboundRefused) as refused:
        check_url(url_for(address))
    assert str(refused.value) == f"address is {reason}"


@pytest.mark.parametrize("address", ALLOWED)
def test_check_url_accepts_a_public_address_literal(settings, address):
    settings.HELPDESK = {**settings.HELPDESK, "OUTBOUND_ALLOWED_HOSTS": []}
    check_url(url_for(address))  # no exception: the URL is acceptable


@pytest.mark.parametrize("host", ["2130706433", "0x7f.1", "127.1", "017700000001"])
def test_numeric_spellings_of_loopback_are_refused(settings, host):
    """getaddrinfo reads these as 127.0.0.1; the check judges what they resolve to, not how they look."""
    settings.HELPDESK = {**settings.HELPDESK, "OUTBOUND_ALLOWED_HOSTS": []}
    with pytest.raises(OutboundRefused, match="loopback"):
        check_url(f"https://{host}/")
