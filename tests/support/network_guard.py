"""Refuse every outbound connection that is not to the loopback interface.

Tests and benchmarks may only talk to servers they started on 127.0.0.1. A test that would reach a remote model
(or anything else on the internet) fails with `RemoteNetworkBlocked` instead of silently depending on it.
"""

from __future__ import annotations

import ipaddress
import socket

_original_connect = socket.socket.connect
_original_connect_ex = socket.socket.connect_ex
_installed = False


class RemoteNetworkBlocked(RuntimeError):
    pass


def _is_local(address: object) -> bool:
    if not isinstance(address, tuple) or not address:
        return True  # AF_UNIX paths and other local families
    host = str(address[0])
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False  # a host name: resolving it could already leave the machine


def _guarded_connect(self: socket.socket, address: object) -> None:
    if not _is_local(address):
        raise RemoteNetworkBlocked(f"tests may only connect to 127.0.0.1, not {address!r}")
    return _original_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: object) -> int:
    if not _is_local(address):
        raise RemoteNetworkBlocked(f"tests may only connect to 127.0.0.1, not {address!r}")
    return _original_connect_ex(self, address)


def install() -> None:
    global _installed
    if _installed:
        return
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
    _installed = True
