"""Serve the demo's local test page: a shop page on its own origin with the website widget on it.

The page carries the widget's one script tag under a strict Content-Security-Policy (scripts and connections
from the helpdesk only, no inline script or style), so it shows the widget working where a careful site's policy
would let it. The widget's chromium test serves the same page (`DemoPage`).
"""

from __future__ import annotations

import html
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from helpdesk.models import Inbox


def page_html(*, helpdesk: str, website_token: str, title: str = "Acme Shop", locale: str = "") -> bytes:
    src = html.escape(f"{helpdesk.rstrip('/')}/static/helpdesk/widget/widget.js", quote=True)
    # No data-locale: the widget follows the browser's language.
    language = f" data-locale='{html.escape(locale, quote=True)}'" if locale else ""
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title></head><body><h1>{html.escape(title)}</h1>"
        "<p>A page of a shop on another origin. The chat button is at the bottom right.</p>"
        f"<script src='{src}' data-website-token='{html.escape(website_token, quote=True)}'{language} async>"
        "</script>"
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

    def __init__(self, *, helpdesk: str, website_token: str, port: int = 0, locale: str = "") -> None:
        body = page_html(helpdesk=helpdesk, website_token=website_token, locale=locale)
        policy = page_policy(helpdesk)

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


class Command(BaseCommand):
    help = "Serve a shop page with the website widget on 127.0.0.1 (the demo's widget inbox must allow its origin)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--port", type=int, default=8090, help="Port of the shop page (default 8090).")
        parser.add_argument("--helpdesk", default="http://127.0.0.1:8000", help="Where the helpdesk runs.")
        parser.add_argument(
            "--inbox", default="", help="Website token of the widget inbox (default: the first)."
        )
        parser.add_argument(
            "--locale", default="", help="The widget's language: en or zh (default: the browser's)."
        )

    def handle(self, *args: Any, port: int, helpdesk: str, inbox: str, locale: str, **options: Any) -> None:
        widgets = Inbox.objects.filter(channel_type=Inbox.ChannelType.WIDGET).order_by("id")
        found = widgets.filter(webhook_token=inbox).first() if inbox else widgets.first()
        if found is None:
            raise CommandError(
                "No widget inbox: run the demo seed (scripts/run does) or add one in the admin."
            )
        page = DemoPage(
            helpdesk=helpdesk, website_token=found.webhook_token, port=port, locale=locale
        ).start()
        self.stdout.write(f"Shop page with the widget of '{found.name}': {page.origin}/  (Ctrl+C stops it)")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            page.stop()
