"""A TCP server on 127.0.0.1 that answers every connection with bytes a test chooses: redirects, huge or
compressed bodies, a body dripped one byte at a time, a banner that is not HTTP at all."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable

Answer = Callable[[socket.socket], None]


def http_answer(status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> Answer:
    def answer(conn: socket.socket) -> None:
        lines = [f"HTTP/1.1 {status} Scripted", f"Content-Length: {len(body)}", "Connection: close"]
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)

    return answer


def unsized_answer(body: bytes) -> Answer:
    """A 200 without Content-Length: the body ends when the connection closes, so only reading counts it."""

    def answer(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + body)

    return answer


def dripping_answer(seconds: float, interval: float = 0.2) -> Answer:
    """One body byte every `interval` seconds for `seconds`: each read succeeds well within a read timeout."""

    def answer(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            conn.sendall(b".")
            time.sleep(interval)

    return answer


def raw_answer(data: bytes) -> Answer:
    def answer(conn: socket.socket) -> None:
        conn.sendall(data)

    return answer


class RawServer:
    """Reads each request's head (and a Content-Length body), records it, then runs `answer` on the socket."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.requests: list[bytes] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.port: int = self._listener.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            data = b""
            try:
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, _, body = data.partition(b"\r\n\r\n")
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                        while len(body) < length:
                            body += conn.recv(65536)
                self.requests.append(head + b"\r\n\r\n" + body)
                self.answer(conn)
            except OSError:
                return  # the client gave up (a test of limits): nothing to answer

    def __enter__(self) -> RawServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._listener.close()
