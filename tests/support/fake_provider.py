"""A fake chat provider (Telegram Bot API, WhatsApp Cloud API, Slack Web API) on 127.0.0.1.

It records every request (method, path, headers, JSON) and answers from a script per path suffix: scripted
answers are used once each, in order, then the provider's normal success answer. Inboxes under test point their
`provider_config["api_base_url"]` at `base_url`.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import defaultdict, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Answer:
    status: int = 200
    body: Any = None
    """Sent as JSON unless it is bytes."""
    headers: dict[str, str] = field(default_factory=dict)


# ---- scripted failures, shaped like the real providers' answers ---------------------------------------------


def http_500() -> Answer:
    return Answer(500, b"<html>Internal Server Error</html>")


def http_429(retry_after: int) -> Answer:
    return Answer(429, {"error": "rate limited"}, {"Retry-After": str(retry_after)})


def telegram_retry_after(seconds: int) -> Answer:
    return Answer(
        429,
        {
            "ok": False,
            "error_code": 429,
            "description": f"Too Many Requests: retry after {seconds}",
            "parameters": {"retry_after": seconds},
        },
    )


def telegram_blocked() -> Answer:
    return Answer(
        403, {"ok": False, "error_code": 403, "description": "Forbidden: bot was blocked by the user"}
    )


def telegram_unauthorized() -> Answer:
    return Answer(401, {"ok": False, "error_code": 401, "description": "Unauthorized"})


def whatsapp_error(code: int, message: str, status: int = 400, details: str = "") -> Answer:
    error: dict[str, Any] = {"message": message, "type": "OAuthException", "code": code, "fbtrace_id": "AbC"}
    if details:
        error["error_data"] = {"messaging_product": "whatsapp", "details": details}
    return Answer(status, {"error": error})


def whatsapp_reengagement() -> Answer:
    return whatsapp_error(
        131047,
        "(#131047) Re-engagement message",
        details="Message failed to send because more than 24 hours have passed since the customer last replied.",
    )


def whatsapp_token_expired() -> Answer:
    return whatsapp_error(190, "Error validating access token: Session has expired", status=401)


def slack_error(error: str) -> Answer:
    # Slack reports most failures with HTTP 200.
    return Answer(200, {"ok": False, "error": error})


class FakeProvider:
    """Records requests and answers them like Telegram, WhatsApp Cloud or Slack would."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._scripts: dict[str, deque[Answer | None]] = defaultdict(deque)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    decoded = json.loads(raw)
                except ValueError:
                    decoded = None
                with provider._lock:
                    answer = provider._next_answer(self.path, decoded)
                    provider.requests.append(
                        {
                            "path": self.path,
                            "headers": dict(self.headers),
                            "body": raw,
                            "json": decoded,
                            "status": answer.status,
                        }
                    )
                payload = answer.body if isinstance(answer.body, bytes) else json.dumps(answer.body).encode()
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json")
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def script(self, path_suffix: str, *answers: Answer | None) -> None:
        """Answer the next requests whose path ends with `path_suffix` with `answers`, one each, in order
        (None: the provider's normal success answer)."""
        with self._lock:
            self._scripts[path_suffix].extend(answers)

    def texts(self) -> list[str]:
        """The text of every recorded send, whatever the provider's field for it."""
        texts = []
        for request in self.requests:
            body = request["json"] or {}
            texts.append(body["text"]["body"] if isinstance(body.get("text"), dict) else body.get("text"))
        return texts

    def statuses(self) -> list[int]:
        """The HTTP status of every recorded request's answer."""
        return [request["status"] for request in self.requests]

    def _next_answer(self, path: str, body: Any) -> Answer:
        for suffix, queue in self._scripts.items():
            if path.endswith(suffix) and queue:
                scripted = queue.popleft()
                if scripted is not None:
                    return scripted
                break
        return self._success(path, body if isinstance(body, dict) else {})

    def _success(self, path: str, body: dict[str, Any]) -> Answer:
        n = next(self._ids)
        if path.endswith("/sendMessage"):
            return Answer(
                200,
                {
                    "ok": True,
                    "result": {
                        "message_id": 1000 + n,
                        "chat": {"id": body.get("chat_id"), "type": "private"},
                        "date": 1700000000,
                        "text": body.get("text"),
                    },
                },
            )
        if path.endswith("/messages"):
            return Answer(
                200,
                {
                    "messaging_product": "whatsapp",
                    "contacts": [{"input": body.get("to"), "wa_id": body.get("to")}],
                    "messages": [{"id": f"wamid.FAKE{n:08d}"}],
                },
            )
        if path.endswith("/chat.postMessage"):
            return Answer(200, {"ok": True, "channel": body.get("channel"), "ts": f"1700000000.{n:06d}"})
        return Answer(404, {"ok": False, "error": "unknown_method"})

    def __enter__(self) -> FakeProvider:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
