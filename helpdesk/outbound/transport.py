"""An httpx client that can only reach what the outbound policy allows, within a time and size budget.

The address check happens where the socket is opened: `_PolicyBackend.connect_tcp` (an httpcore network
backend) resolves the host, checks every address and connects to a checked IP itself. Checking a URL first
and letting the library resolve the name again would leave a gap a DNS server can exploit (DNS rebinding:
a public answer for the check, 127.0.0.1 for the connection). TLS still verifies the certificate against the
host name: httpcore passes the URL's host as `server_hostname` to `start_tls`, whatever address we dialled.

Every request (each redirect hop too, when a caller asks to follow them) is checked for scheme and
credentials; the client itself follows no redirects. `trust_env=False`: a proxy from the environment would
make the connection go to the proxy, so the policy could not see where the request really goes.
"""

from __future__ import annotations

import functools
import ssl
import time
from collections.abc import Iterable, Iterator
from contextvars import ContextVar

import httpcore
import httpx

from helpdesk.conf import helpdesk_setting

from .errors import HostNotResolved, OutboundRefused, ResponseTooLarge
from .policy import OutboundPolicy, checked_addresses, checked_url

# When the current request must be finished (time.monotonic()). Socket operations run in the thread that
# sends the request or reads its body, so a context variable set around those calls reaches the stream below.
_deadline: ContextVar[float | None] = ContextVar("outbound_deadline", default=None)


def _remaining(timeout: float | None, expired: type[httpcore.TimeoutException]) -> float | None:
    """The per-operation timeout shortened to what is left of the request's total budget."""
    deadline = _deadline.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise expired("the request's total time limit is used up")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A socket stream whose reads and writes end at the request's deadline: per-read timeouts alone let a
    server that sends one byte at a time hold a worker forever."""

    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _remaining(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _remaining(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        tls = self._stream.start_tls(
            ssl_context, server_hostname, _remaining(timeout, httpcore.ConnectTimeout)
        )
        return _DeadlineStream(tls)

    def get_extra_info(self, info: str) -> object:
        return self._stream.get_extra_info(info)


class _PolicyBackend(httpcore.SyncBackend):
    """Connects only to addresses the policy allows, checked at connection time."""

    def __init__(self, policy: OutboundPolicy) -> None:
        self._policy = policy

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        try:
            addresses = checked_addresses(host, port, self._policy)
        except HostNotResolved as exc:
            # While sending, an unresolvable name is a network error (a DNS outage passes); only a refused
            # address is the policy's verdict.
            raise httpcore.ConnectError(str(exc)) from exc
        error: httpcore.ConnectError | None = None
        for address in addresses:  # like socket.create_connection: the next address when one fails
            try:
                stream = super().connect_tcp(
                    str(address),
                    port,
                    timeout=_remaining(timeout, httpcore.ConnectTimeout),
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except httpcore.ConnectError as exc:
                error = exc
                continue
            return _DeadlineStream(stream)
        assert error is not None  # checked_addresses never returns an empty list
        raise error

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        raise OutboundRefused("unix sockets are not allowed")


class _LimitedStream(httpx.SyncByteStream):
    """The response body, stopped once it exceeds the size limit or the request's deadline passes.

    The headers are judged here, when someone reads the body, not when the response arrives: a caller that
    needs only the status (a callback delivery) must not fail because of a body it never reads."""

    def __init__(
        self, stream: httpx.SyncByteStream, *, headers: httpx.Headers, limit: int, deadline: float
    ) -> None:
        self._stream = stream
        self._headers = headers
        self._limit = limit
        self._deadline = deadline

    def _refuse_by_headers(self) -> None:
        if self._headers.get("Content-Encoding", "identity").strip().lower() not in ("", "identity"):
            # We asked for identity; a decompressed body could be a thousand times what was received.
            raise ResponseTooLarge("compressed responses are refused (their size cannot be limited)")
        length = self._headers.get("Content-Length", "")
        if length.isdigit() and int(length) > self._limit:
            raise ResponseTooLarge(f"the response is larger than {self._limit} bytes")

    def __iter__(self) -> Iterator[bytes]:
        self._refuse_by_headers()
        received = 0
        chunks = iter(self._stream)
        while True:
            token = _deadline.set(self._deadline)
            try:
                chunk = next(chunks, None)
            finally:
                _deadline.reset(token)
            if chunk is None:
                return
            received += len(chunk)
            if received > self._limit:
                raise ResponseTooLarge(f"the response is larger than {self._limit} bytes")
            yield chunk

    def close(self) -> None:
        self._stream.close()


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    # Built once (loading the CA bundle takes milliseconds) and shared: SSLContext is safe across threads.
    return httpx.create_ssl_context()


class _PolicyTransport(httpx.HTTPTransport):
    def __init__(self, *, policy: OutboundPolicy, total_timeout: float, max_response_bytes: int) -> None:
        # httpx 0.28's HTTPTransport builds its httpcore pool in __init__ with no way to pass a network backend,
        # and its methods use nothing but `self._pool` (httpx/_transports/default.py, 0.28.1), so the pool is
        # built here instead of calling super().__init__.
        self._pool = httpcore.ConnectionPool(
            ssl_context=_ssl_context(),
            max_connections=10,
            max_keepalive_connections=5,
            keepalive_expiry=5.0,
            network_backend=_PolicyBackend(policy),
        )
        self._policy = policy
        self._total_timeout = total_timeout
        self._max_response_bytes = max_response_bytes

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        checked_url(request.url, self._policy)
        # Compressed bodies would be decompressed past the size limit (a small gzip bomb expands a thousandfold).
        request.headers["Accept-Encoding"] = "identity"
        deadline = time.monotonic() + self._total_timeout
        token = _deadline.set(deadline)
        try:
            response = super().handle_request(request)
        finally:
            _deadline.reset(token)
        assert isinstance(response.stream, httpx.SyncByteStream)
        response.stream = _LimitedStream(
            response.stream, headers=response.headers, limit=self._max_response_bytes, deadline=deadline
        )
        return response


def outbound_client(*, timeout: float, max_response_bytes: int | None = None) -> httpx.Client:
    """An httpx.Client whose connections go only to addresses the policy allows, checked on the address
    actually connected to (DNS rebinding), following no redirects to refused addresses, with the time and size
    limits. The openai SDK accepts it as `http_client=`.

    `timeout` is the total time one request may take, connection and body included (and the per-operation
    timeout too). `max_response_bytes` defaults to the `OUTBOUND_MAX_RESPONSE_BYTES` setting. A refused URL,
    address or response raises OutboundRefused, not an httpx error: retrying will not change it, and the openai
    SDK (which retries and wraps only httpx errors) lets it through unchanged."""
    policy = OutboundPolicy.from_settings()
    limit = (
        helpdesk_setting("OUTBOUND_MAX_RESPONSE_BYTES") if max_response_bytes is None else max_response_bytes
    )
    transport = _PolicyTransport(policy=policy, total_timeout=timeout, max_response_bytes=int(limit))
    return httpx.Client(transport=transport, timeout=timeout, follow_redirects=False, trust_env=False)
