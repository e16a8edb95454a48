"""A shop's page with the widget's one script tag, served from its own origin with a strict Content-Security-Policy:
the local test page of the demo (`manage.py helpdesk_widget_page`) and of the widget's browser test.

The policy allows scripts and connections from the helpdesk only, and no inline script or style at all, so the
page shows that the widget works where a careful site's policy would let it.
"""

from __future__ import annotations

import html
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def page_html(*, helpdesk: str, website_token: str, title: str = "Acme Shop") -> bytes:
    src = html.escape(f"{helpdesk.rstrip('/')}/static/helpdesk/widget/widget.js", quote=True)
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title></head><body><h1>{html.escape(title)}</h1>"
        "<p>A page of a shop on another origin. The chat button is at the bottom right.</p>"
        f"<script src='{src}' data-website-token='{html.escape(website_token, quote=True)}' async></script>"
        "</body></html>"
    ).encode()


def page_policy(helpdesk: str) -> str:
    origin = helpdesk.rstrip("/")
    return (
        f"default-src 'none'; script-src {origin}; connect-src {origin}; style-src 'none'; img-src 'none'; "
        "base-uri 'none'; form-action 'none'"
    )


class DemoPage:
    """The page on 127.0.0.1:`port` (0: a free port), served by a thread until `stop()`."""

    def __init__(self, *, helpdesk: str, website_token: str, port: int = 0) -> None:
        body, policy = page_html(helpdesk=helpdesk, website_token=website_token), page_policy(helpdesk)

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Security-Policy", policy)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> DemoPage:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
