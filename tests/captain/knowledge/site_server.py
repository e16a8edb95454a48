"""A small help-centre site on 127.0.0.1 for the fetch tests: good pages and every kind of bad answer."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARTICLE = """<!doctype html><html><head><meta charset="utf-8"><title>Returns | Northwind Help</title>
<script>var tracking = "cookie-consent-script";</script></head><body>
<nav><a href="/site/">Home</a> <a href="/site/a">Orders</a></nav>
<div class="cookie-banner">We use cookies to improve your experience.</div>
<main><article><h1>Returning a scooter</h1>
<p>You can return a scooter within 30 days of delivery. It must have fewer than 20 km on the odometer.</p>
<h2>Refund times</h2><p>Card refunds take 5 business days. PayPal refunds take 2 business days.</p>
</article></main><footer>Copyright 2026 Northwind Scooters Ltd.</footer></body></html>"""


def _page(title: str, body: str, links: tuple[str, ...] = ()) -> str:
    anchors = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    return (
        f"<!doctype html><html><head><title>{title}</title></head><body><nav><ul>{anchors}</ul></nav>"
        f"<main><article><h1>{title}</h1><p>{body}</p></article></main></body></html>"
    )


# A site three links deep, with an off-site link, a fragment, a PDF, a mail link, a 404 and a malformed link.
SITE = {
    "/site/": _page(
        "Help centre",
        "Welcome to the Northwind help centre. Pick a topic below.",
        ("/site/a", "/site/b", "/site/b#top", "http://example.org/elsewhere", "/site/manual.pdf", "mailto:x@y.z",
         "/site/missing"),
    ),
    "/site/a": _page("Orders", "Orders ship within two business days.", ("/site/a/deep", "/site/")),
    "/site/b": _page("Battery", "A full charge takes about four hours.", ("/site/", "http://[oops/")),
    "/site/a/deep": _page("Order tracking", "Track an order from the app's Orders tab.", ("/site/a/deeper",)),
    "/slow-site/": _page("Slow site", "Every page here takes three seconds.", ("/slow", "/slow?again", "/slow?x")),
    "/site/a/deeper": _page("Lost parcels", "A parcel lost for ten days is replaced free of charge.", ()),
}  # fmt: skip

SCRIPT_ONLY = (
    "<html><head><script>var a = 1;</script></head><body><script>document.write('x')</script></body></html>"
)
BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>&lol3;</loc></url></urlset>"""


def urlset(locations: list[str]) -> str:
    items = "".join(f"<url><loc>{loc}</loc></url>" for loc in locations)
    return (
        f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{items}</urlset>'
    )


@dataclass
class SiteServer:
    url: str
    requests: list[str] = field(default_factory=list)
    stop: Callable[[], None] = lambda: None


class _Handler(BaseHTTPRequestHandler):
    server_version = "TestSite/1"
    requests: list[str]
    base: str

    def log_message(self, format: str, *args: object) -> None:
        return

    def _send(self, status: int, body: str | bytes = b"", content_type: str = "text/html; charset=utf-8",
              headers: dict[str, str] | None = None) -> None:  # fmt: skip
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, chunks: Iterator[bytes], content_type: str) -> None:
        """No Content-Length: the body ends when the connection does (HTTP/1.0), or never."""
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.end_headers()
        started = time.monotonic()
        try:
            for chunk in chunks:
                self.wfile.write(chunk)
                if time.monotonic() - started > 30:  # a client that never hangs up cannot keep this thread
                    return
        except (BrokenPipeError, ConnectionResetError):
            return

    def do_GET(self) -> None:
        path = self.path
        self.requests.append(path)
        xml = "application/xml"
        if path == "/article":
            self._send(200, ARTICLE)
        elif path in SITE:
            self._send(200, SITE[path])
        elif path.startswith("/redirect/"):
            left = int(path.rsplit("/", 1)[1])
            target = "/article" if left <= 1 else f"/redirect/{left - 1}"
            self._send(302, headers={"Location": target})
        elif path == "/bad-location":
            self._send(302, headers={"Location": "http://[oops/"})
        elif path == "/to-private":
            self._send(302, headers={"Location": "http://10.0.0.1/admin?token=secret"})
        elif path == "/to-metadata":
            self._send(301, headers={"Location": "http://169.254.169.254/latest/meta-data/"})
        elif path == "/endless":
            self._stream((b"<p>" + b"more text " * 100 + b"</p>" for _ in iter(int, 1)), "text/html")
        elif path.startswith("/slow?") or path == "/slow":
            time.sleep(3)
            self._send(200, ARTICLE)
        elif path == "/script-only":
            self._send(200, SCRIPT_ONLY)
        elif path == "/image.png":
            self._send(200, b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, content_type="image/png")
        elif path == "/sitemap.xml":
            self._send(
                200, urlset([f"{self.base}/article", f"{self.base}/site/a", "http://example.org/x"]), xml
            )
        elif path == "/sitemap-index.xml":
            index = "".join(f"<sitemap><loc>{self.base}/sitemap-{n}.xml</loc></sitemap>" for n in (1, 2))
            body = f'<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{index}</sitemapindex>'
            self._send(200, body, xml)
        elif path == "/sitemap-1.xml":
            self._send(200, urlset([f"{self.base}/article", f"{self.base}/site/b"]), xml)
        elif path == "/sitemap-2.xml":
            self._send(200, urlset([f"{self.base}/site/a/deep", f"{self.base}/site/missing"]), xml)
        elif path == "/huge-sitemap.xml":
            head = b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            rows = (f"<url><loc>{self.base}/p/{n}</loc></url>".encode() for n in range(100_000))
            self._stream(_chain(head, rows, b"</urlset>"), xml)
        elif path == "/entities.xml":
            self._send(200, BILLION_LAUGHS, xml)
        elif path == "/not-a-sitemap.xml":
            self._send(200, "<html><body>hello</body></html>", xml)
        else:
            self._send(404, "<html><body><h1>Not found</h1></body></html>")


def _chain(head: bytes, rows: Iterator[bytes], tail: bytes) -> Iterator[bytes]:
    yield head
    yield from rows
    yield tail


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        # Clients hanging up mid-answer is what the size and time limit tests do on purpose.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


def start_site() -> SiteServer:
    requests: list[str] = []
    handler = type("Handler", (_Handler,), {"requests": requests, "base": ""})
    server = _Server(("127.0.0.1", 0), handler)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    handler.base = base
    thread = threading.Thread(target=server.serve_forever, name="knowledge-test-site", daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

    return SiteServer(url=base, requests=requests, stop=stop)
