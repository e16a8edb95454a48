"""The outbound policy: which URLs the server may fetch or post to on a tenant's behalf.

- Scheme `https`. Plain `http` only for a host the operator allowlists, or for every host when the operator
  sets `OUTBOUND_ALLOW_HTTP` (an internal provider proxy without TLS, say). Anything else (`file:`, `ftp:`,
  `gopher:` ...) and URLs with credentials (`https://user:pass@host/`) are refused.
- Every address the host resolves to must be globally routable (`addresses.refusal_reason`); one refused
  address refuses the host, since the socket may pick any of them.
- `OUTBOUND_ALLOWED_HOSTS` (operator setting) lists exceptions: a host name (matched exactly, case-insensitive;
  any address it resolves to is then accepted) or an IP address / network (`127.0.0.1`, `10.0.0.0/8`: accepted
  as the address connected to, whatever name led there). Each may end in `:port` (`127.0.0.1:8081`,
  `proxy.internal:8080`, `10.0.0.0/8:443`, IPv6 in brackets: `[::1]:8081`) and then admits that port only;
  without one it admits every port. Prefer the port: `127.0.0.1` alone also opens Redis, the database and
  every other service listening on the machine to whoever configures a URL. A malformed entry is
  ImproperlyConfigured (a typo must not quietly admit more, or less, than the operator meant).

`check_url` is the check on save; `helpdesk.outbound.transport` applies the same rules to the address each
connection really goes to, so a name that resolves differently at send time (DNS rebinding) is still refused.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Iterable
from dataclasses import dataclass

import httpx
from django.core.exceptions import ImproperlyConfigured, ValidationError

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


def _split_port(entry: str) -> tuple[str, int | None]:
    """`host[:port]`, `[IPv6][:port]`; a bare IPv6 address (two colons or more) carries no port."""
    port: str | None = None
    if entry.startswith("["):
        host, closed, rest = entry[1:].partition("]")
        if not closed or (rest and not rest.startswith(":")):
            raise ValueError("unbalanced brackets")
        port = rest[1:] if rest else None
    elif entry.count(":") == 1:
        host, _, port = entry.partition(":")
    else:
        host = entry
    if port is None:
        return host, None
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError("bad port")
    return host, int(port)


AnyPort = None
"""An entry without a port: every port of the host, address or network (kept for existing configurations)."""
Ports = frozenset[int | None]


def _admits(ports: Ports, port: int) -> bool:
    return AnyPort in ports or port in ports


@dataclass(frozen=True)
class OutboundPolicy:
    allowed_hosts: frozenset[tuple[str, int | None]] = frozenset()
    """(host name, port or AnyPort)."""
    allowed_networks: tuple[tuple[IPNetwork, int | None], ...] = ()
    allow_http: bool = False

    @classmethod
    def from_entries(cls, entries: Iterable[str], *, allow_http: bool = False) -> OutboundPolicy:
        """Allowlist entries that parse as an address or network are networks; the rest are host names."""
        hosts: set[tuple[str, int | None]] = set()
        networks: list[tuple[IPNetwork, int | None]] = []
        for raw in entries:
            entry = raw.strip().lower()
            if not entry:
                continue
            try:
                host, port = _split_port(entry)
            except ValueError:
                raise ImproperlyConfigured(
                    f"HELPDESK_OUTBOUND_ALLOWED_HOSTS: {raw.strip()!r} is not host, host:port or "
                    "[IPv6 address]:port (a port from 1 to 65535)"
                ) from None
            host = _normalised_host(host)
            try:
                networks.append((ipaddress.ip_network(host, strict=False), port))
            except ValueError:
                hosts.add((host, port))
        return cls(frozenset(hosts), tuple(networks), allow_http)

    @classmethod
    def from_settings(cls) -> OutboundPolicy:
        entries = helpdesk_setting("OUTBOUND_ALLOWED_HOSTS")
        if isinstance(entries, str):
            entries = entries.split(",")
        return cls.from_entries(entries, allow_http=bool(helpdesk_setting("OUTBOUND_ALLOW_HTTP")))

    def name_ports(self, host: str) -> Ports:
        """The ports listed for this host name (AnyPort for an entry without one); empty when not listed."""
        name = _normalised_host(host)
        return frozenset(port for listed, port in self.allowed_hosts if listed == name)

    def address_ports(self, address: IPAddress) -> Ports:
        # `in` is False across IP versions, so an IPv4 network never matches an IPv6 address.
        return frozenset(port for network, port in self.allowed_networks if address in network)

    def host_ports(self, host: str) -> Ports:
        """The ports listed for the URL's host itself: by name, or as an address inside a listed network."""
        literal = _ip_literal(_normalised_host(host))
        return self.name_ports(host) | (self.address_ports(literal) if literal is not None else frozenset())


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
    if parsed.scheme != "http" or policy.allow_http:
        return
    port = parsed.port or DEFAULT_PORTS[parsed.scheme]
    listed = policy.host_ports(_host(parsed))
    if not _admits(listed, port):
        # A host allowlisted on other ports: say which port was refused, or the operator looks for a typo.
        other_ports = f" (port {port} is not allowlisted for it)" if listed else ""
        raise OutboundRefused(f"plain http is not allowed for this host, only https{other_ports}")


def _host(parsed: httpx.URL) -> str:
    return parsed.raw_host.decode("ascii")  # IDNA-encoded, as the connection will use it


def checked_url(url: str | httpx.URL, policy: OutboundPolicy) -> httpx.URL:
    """Scheme, credentials and host of `url`, without DNS: what the transport checks on every request."""
    parsed = _parsed(url)
    _check_http(parsed, policy)
    return parsed


DNS_TIMEOUT_SECONDS = 8.0
"""Longest wait for the resolver. glibc's own bound is timeout x attempts x name servers (5 s x 2 x up to 3):
a lost packet or a dead server would hold a web or worker thread that long, and on the web server every other
request of that worker waits behind it (sync views share one thread per worker under ASGI)."""


def _lookup(host: str, port: int, timeout: float) -> list[str]:
    """The addresses `socket.getaddrinfo` gives, as text; given up on after `timeout` seconds. A thread of its own per lookup (not a pool): a
    pool's idle threads do not survive a worker's fork, and a lookup given up on finishes in the background."""
    outcome: list[list[str] | Exception] = []

    def lookup() -> None:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            outcome.append([str(info[4][0]) for info in infos])
        except (OSError, UnicodeError) as exc:
            outcome.append(exc)

    thread = threading.Thread(target=lookup, name="dns-lookup", daemon=True)
    thread.start()
    thread.join(timeout)
    if not outcome:
        raise HostNotResolved(f"the host name did not resolve within {timeout:g} s")
    if isinstance(outcome[0], Exception):
        raise HostNotResolved("the host name does not resolve") from outcome[0]
    return outcome[0]


def resolve_host(host: str, port: int, *, timeout: float = DNS_TIMEOUT_SECONDS) -> list[IPAddress]:
    """Every address `host` resolves to, in the resolver's order. Tests replace this function: no DNS server
    can run in the test environment."""
    addresses: list[IPAddress] = []
    for text in _lookup(host, port, timeout):
        address = ipaddress.ip_address(text)
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise HostNotResolved("the host name does not resolve")
    return addresses


def checked_addresses(host: str, port: int, policy: OutboundPolicy) -> list[IPAddress]:
    """The addresses of `host` a connection to `port` may use; OutboundRefused when any of them is refused."""
    addresses = resolve_host(host, port)
    by_name = policy.name_ports(host)
    if _admits(by_name, port):
        return addresses
    for address in addresses:
        by_address = policy.address_ports(address)
        if _admits(by_address, port):
            continue
        reason = refusal_reason(address)
        if reason is not None:
            other_ports = f" and port {port} is not allowlisted for it" if by_name or by_address else ""
            raise OutboundRefused(f"address is {reason}{other_ports}")
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
