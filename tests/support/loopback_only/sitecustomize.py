"""Loaded by every Python process started with this folder on PYTHONPATH (`site` imports `sitecustomize`): the
process may only reach the loopback interface. Standard library only, since it runs before the project is on
sys.path.

Used for servers that a test fills with generated data (tests/api/): a fuzzer writes custom tools and model
endpoints with made-up URLs, and saving one resolves its host (the outbound policy's check), a test call connects
to it. In this process a host name other than `localhost` does not resolve (no DNS query leaves the machine) and a
connection to any other address is refused, both with the OSError a real unreachable host gives, so the server's
own handling of an unreachable destination is what runs. tests/support/network_guard.py does the same for the
test process itself, where a RuntimeError that fails the test is wanted instead.
"""

from __future__ import annotations

import ipaddress
import socket

_getaddrinfo = socket.getaddrinfo
_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex


def _loopback_host(host: object) -> bool:
    if host is None:
        return True  # a passive (listening) lookup
    name = host.decode() if isinstance(host, bytes) else str(host)
    if name.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(name.split("%")[0]).is_loopback
    except ValueError:
        return False


def _loopback_or_local(address: object) -> bool:
    if not isinstance(address, tuple) or not address:
        return True  # AF_UNIX paths and other local families
    return _loopback_host(address[0])


def getaddrinfo(host, port, *args, **kwargs):  # type: ignore[no-untyped-def]
    try:
        ipaddress.ip_address(str(host).split("%")[0])
        literal = True
    except ValueError:
        literal = False
    if not literal and not _loopback_host(host):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known (loopback-only test process)")
    return _getaddrinfo(host, port, *args, **kwargs)


def connect(self: socket.socket, address: object) -> None:
    if not _loopback_or_local(address):
        raise ConnectionRefusedError(f"loopback-only test process: no connection to {address!r}")
    return _connect(self, address)


def connect_ex(self: socket.socket, address: object) -> int:
    if not _loopback_or_local(address):
        raise ConnectionRefusedError(f"loopback-only test process: no connection to {address!r}")
    return _connect_ex(self, address)


socket.getaddrinfo = getaddrinfo
socket.socket.connect = connect  # type: ignore[method-assign]
socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
