"""The outbound policy: which URLs the server may fetch or post to on a tenant's behalf.

- Scheme `https`. Plain `http` only for a host the operator allowlists, or for every host when the operator
  sets `OUTBOUND_ALLOW_HTTP` (an internal provider proxy without TLS, say). Anything else (`file:`, `ftp:`,
  `gopher:` ...) and URLs with credentials (`https://user:pass@host/`) are refused.
- Every address the host resolves to must be globally routable (`addresses.refusal_reason`); one refused
  address refuses the host, since the socket may pick any of them.
- `OUTBOUND_ALLOWED_HOSTS` (operator setting) lists exceptions: a host name (matched exactly, case-insensitive;
  any address it resolves to is then accepted) or an IP address / network (`127.0.0.1`, `10.0.0.0/8`: accepted
  as the address connected to, whatever name led there).

`check_url` is the check on save; `helpdesk.outbound.transport` applies the same rules to the address each
connection really goes to, so a name that resolves differently at send time (DNS rebinding) is still refused.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass

import httpx
from django.core.exceptions import ValidationError

from helpdesk.conf import helpdesk_setting

from .addresses import IPAddress, refusal_reason
from .errors import HostNotResolved, OutboundRefused

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
DEFAULT_PORTS = {"https": 443, "http": 80}


def _normalised_host(host: str) -> str:
    return host.strip().lower().rstrip(".")


def _ip_literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


@dataclass(frozen=True)
class OutboundPolicy:
    allowed_hosts: frozenset[str] = frozenset()
    allowed_networks: tuple[IPNetwork, ...] = ()
    allow_http: bool = False

    @classmethod
    def from_entries(cls, entries: Iterable[str], *, allow_http: bool = False) -> OutboundPolicy:
        """Allowlist entries that parse as an address or network are networks; the rest are host names."""
        hosts: set[str] = set()
        networks: list[IPNetwork] = []
        for entry in entries:
            entry = _normalised_host(entry)
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
            except ValueError:
                hosts.add(entry)
        return cls(frozenset(hosts), tuple(networks), allow_http)

    @classmethod
    def from_settings(cls) -> OutboundPolicy:
        entries = helpdesk_setting("OUTBOUND_ALLOWED_HOSTS")
        if isinstance(entries, str):
            entries = entries.split(",")
        return cls.from_entries(entries, allow_http=bool(helpdesk_setting("OUTBOUND_ALLOW_HTTP")))

    def address_allowlisted(self, address: IPAddress) -> bool:
        # `in` is False across IP versions, so an IPv4 network never matches an IPv6 address.
        return any(address in network for network in self.allowed_networks)

    def host_allowlisted(self, host: str) -> bool:
        """The URL's host itself is listed: by name, or as an address inside a listed network."""
        name = _normalised_host(host)
        if name in self.allowed_hosts:
            return True
        literal = _ip_literal(name)
        return literal is not None and self.address_allowlisted(literal)


def _parsed(url: str | httpx.URL) -> httpx.URL:
    """`url` parsed by the same parser as the one that sends (httpx), so the check cannot disagree with the
    request about which host is meant; scheme http(s), no credentials, a host."""
    try:
        parsed = url if isinstance(url, httpx.URL) else httpx.URL(url)
    except (httpx.InvalidURL, TypeError) as exc:
        raise OutboundRefused("not a valid URL") from exc
    if not parsed.scheme:
        raise OutboundRefused("not an absolute https URL")
    if parsed.scheme not in DEFAULT_PORTS:
        raise OutboundRefused(f"scheme {parsed.scheme[:20]!r} is not allowed, only https")
    if not parsed.raw_host:
        raise OutboundRefused("the URL has no host")
    if parsed.userinfo:
        raise OutboundRefused("credentials in the URL are not allowed")
    return parsed


def _check_http(parsed: httpx.URL, policy: OutboundPolicy) -> None:
    if parsed.scheme == "http" and not (policy.allow_http or policy.host_allowlisted(_host(parsed))):
        raise OutboundRefused("plain http is not allowed for this host, only https")


def _host(parsed: httpx.URL) -> str:
    return parsed.raw_host.decode("ascii")  # IDNA-encoded, as the connection will use it


def checked_url(url: str | httpx.URL, policy: OutboundPolicy) -> httpx.URL:
    """Scheme, credentials and host of `url`, without DNS: what the transport checks on every request."""
    parsed = _parsed(url)
    _check_http(parsed, policy)
    return parsed


def resolve_host(host: str, port: int) -> list[IPAddress]:
    """Every address `host` resolves to, in the resolver's order. Tests replace this function: no DNS server
    can run in the test environment."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise HostNotResolved("the host name does not resolve") from exc
    addresses: list[IPAddress] = []
    for _family, _type, _proto, _canonname, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]))
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise HostNotResolved("the host name does not resolve")
    return addresses


def checked_addresses(host: str, port: int, policy: OutboundPolicy) -> list[IPAddress]:
    """The addresses of `host` a connection may use; OutboundRefused when any of them is refused."""
    addresses = resolve_host(host, port)
    if _normalised_host(host) in policy.allowed_hosts:
        return addresses
    for address in addresses:
        if policy.address_allowlisted(address):
            continue
        reason = refusal_reason(address)
        if reason is not None:
            raise OutboundRefused(f"address is {reason}")
    return addresses


def check_url(url: str) -> None:
    """Scheme, host and resolved-address check; raises OutboundRefused. Used on save and before sending."""
    policy = OutboundPolicy.from_settings()
    parsed = _parsed(url)
    # Addresses first: "address is a cloud metadata service" says more than "plain http is not allowed".
    checked_addresses(_host(parsed), parsed.port or DEFAULT_PORTS[parsed.scheme], policy)
    _check_http(parsed, policy)


def validate_outbound_url(value: str) -> None:
    """Django validator: raises django.core.exceptions.ValidationError with a clear message (wraps check_url)."""
    try:
        check_url(value)
    except OutboundRefused as exc:
        raise ValidationError(
            "This URL is refused by the outbound policy: %(reason)s.",
            code="outbound_refused",
            params={"reason": str(exc)},
        ) from exc
