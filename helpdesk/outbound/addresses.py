"""Which IP addresses a tenant's URL may reach: globally routable unicast addresses only.

Pure standard library (`ipaddress`), no Django. The checks are explicit rather than only `is_global`, because
Python's classification has changed between patch releases (3.11.7 calls 224.0.0.1 and fec0::1 global) and
because an IPv6 address can carry an IPv4 one (IPv4-mapped, 6to4, NAT64) that the socket would really reach.
"""

from __future__ import annotations

import ipaddress

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Cloud metadata services hand out the instance's credentials to whoever asks from inside it. Most sit in
# ranges refused anyway; they are named so the reason says what they are, and 168.63.129.16 is not in any
# non-global range at all.
METADATA_ADDRESSES: frozenset[IPAddress] = frozenset(
    ipaddress.ip_address(address)
    for address in (
        "169.254.169.254",  # AWS, GCP, Azure IMDS, OpenStack, DigitalOcean, Oracle
        "169.254.170.2",  # AWS ECS task metadata
        "fd00:ec2::254",  # AWS IMDS over IPv6
        "100.100.100.200",  # Alibaba Cloud
        "168.63.129.16",  # Azure WireServer
    )
)
_SHARED = ipaddress.IPv4Network("100.64.0.0/10")  # carrier-grade NAT (RFC 6598): not global, not "private"
_SIX_TO_FOUR = ipaddress.IPv6Network("2002::/16")
_NAT64 = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("64:ff9b:1::/48"))


def _embedded_ipv4(address: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, str] | None:
    """The IPv4 address an IPv6 address stands for, when a connection to it reaches that IPv4 host."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped, "IPv4-mapped"
    if address in _SIX_TO_FOUR and address.sixtofour is not None:
        return address.sixtofour, "6to4"
    if any(address in network for network in _NAT64):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF), "NAT64"
    return None


def refusal_reason(address: IPAddress) -> str | None:
    """Why the policy refuses `address` (completing "address is ..."), or None when it may be reached."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            inner, form = embedded
            reason = refusal_reason(inner)
            # A NAT64 or IPv4-mapped address of a public host is that public host (DNS64 networks answer
            # this way for every IPv4-only name), so it is judged by the IPv4 address alone.
            return f"{reason} ({form})" if reason else None
    if address in METADATA_ADDRESSES:
        return "a cloud metadata service"
    for flag, reason in (
        (address.is_unspecified, "unspecified"),
        (address.is_loopback, "loopback"),
        (address.is_link_local, "link-local"),
        (address.is_multicast, "multicast"),
        (isinstance(address, ipaddress.IPv4Address) and address in _SHARED, "shared (100.64.0.0/10)"),
        (isinstance(address, ipaddress.IPv6Address) and address.is_site_local, "site-local"),
        (address.is_private, "private"),
        (address.is_reserved, "reserved"),
        (not address.is_global, "not globally routable"),
    ):
        if flag:
            return reason
    return None
