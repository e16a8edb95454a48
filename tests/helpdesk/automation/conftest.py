"""Shared for the automation tests: the broker's helpdesk queue read back, and a real HTTP receiver."""

from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import redis

from helpdesk.services.automation import EVALUATE_TASK


def queued_evaluations(redis_url: str) -> list[dict[str, Any]]:
    """The keyword arguments of the automation tasks waiting on the helpdesk queue, oldest first."""
    raw = redis.Redis.from_url(redis_url).lrange("helpdesk", 0, -1)
    messages = [json.loads(m) for m in reversed(raw)]  # LPUSH: newest first
    return [
        json.loads(base64.b64decode(m["body"]))[1] for m in messages if m["headers"]["task"] == EVALUATE_TASK
    ]


class Receiver:
    """A webhook URL on 127.0.0.1: records each POST body and answers `status`."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.status, self.delay = 200, 0.0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.bodies.append(json.loads(body))
                time.sleep(receiver.delay)
                try:
                    self.send_response(receiver.status)
                    self.end_headers()
                except OSError:
                    pass

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.close()
