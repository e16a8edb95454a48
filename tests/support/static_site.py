"""A small real web site on 127.0.0.1 for knowledge import tests: fixed pages, redirects and a page that never
ends. The outbound policy refuses 127.0.0.1 unless allowlisted; tests/conftest.py allowlists it."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Page:
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    location: str = ""
    endless: bool = False
    """Send the headers, then a little text every 50 ms until the client hangs up."""


class StaticSite:
    def __init__(self, pages: dict[str, Page] | None = None) -> None:
        self.pages: dict[str, Page] = dict(pages or {})
        self.requests: list[str] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def do_GET(self) -> None:
                site.requests.append(self.path)
                page = site.pages.get(self.path.split("?", 1)[0])
                if page is None:
                    self.send_response(404)
                    self.send_header("Content-Type", "text/plain")
                    self.end_headers()
                    self.wfile.write(b"not found")
                    return
                self.send_response(page.status)
                self.send_header("Content-Type", page.content_type)
                if page.location:
                    self.send_header("Location", page.location)
                if not page.endless:
                    self.send_header("Content-Length", str(len(page.body)))
                self.end_headers()
                try:
                    self.wfile.write(page.body)
                    while page.endless:
                        self.wfile.write(b"<p>more and more text</p>\n" * 40)
                        self.wfile.flush()
                        time.sleep(0.05)
                except OSError:
                    return  # the client gave up: that is the point of an endless page

            def log_message(self, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{path}"

    def __enter__(self) -> StaticSite:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
