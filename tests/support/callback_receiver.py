"""An HTTP receiver on 127.0.0.1 standing in for the customer's system behind an API inbox's callback URL."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class CallbackReceiver:
    """Records every POSTed event with its headers; answers `status` (200 unless a test wants failures)."""

    def __init__(self, status: int = 200) -> None:
        self.events: list[dict[str, Any]] = []
        self.status = status
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.events.append(
                    {"headers": dict(self.headers), "body": body, "json": json.loads(body)}
                )
                self.send_response(receiver.status)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/callback"

    def __enter__(self) -> CallbackReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
