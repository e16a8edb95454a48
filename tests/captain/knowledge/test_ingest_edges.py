"""Edges found by probing the ingestion package from outside: a crawl or sitemap must not import pages that an
on-site link redirects to on another host, and cutting very long unbreakable text stays exact."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from captain.knowledge.ingest.chunking import chunk_page
from captain.knowledge.ingest.document import Page, Section
from captain.knowledge.ingest.errors import IngestError
from captain.knowledge.ingest.fetch import FetchedPages, FetchLimits, crawl_site, fetch_sitemap

LIMITS = FetchLimits(request_seconds=2.0, total_seconds=10.0, max_page_bytes=200_000)


def _html(title: str, body: str, links: tuple[str, ...] = ()) -> bytes:
    anchors = "".join(f'<a href="{href}">{href}</a> ' for href in links)
    return (
        f"<html><head><title>{title}</title></head><body><nav>{anchors}</nav><main><article><h1>{title}</h1>"
        f"<p>{body}</p></article></main></body></html>"
    ).encode()


class _Handler(BaseHTTPRequestHandler):
    port = 0

    def log_message(self, format: str, *args: object) -> None:
        return

    def _send(self, status: int, body: bytes = b"", content_type: str = "text/html; charset=utf-8",
              location: str = "") -> None:  # fmt: skip
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if location:
            self.send_header("Location", location)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        # "localhost" and "127.0.0.1" are two hosts to the crawler, served by this one server.
        other_site = f"http://localhost:{self.port}"
        if self.path == "/start":
            self._send(
                200, _html("Help centre", "Pick a topic of the help centre below.", ("/ok", "/go-off"))
            )
        elif self.path == "/ok":
            self._send(200, _html("Orders", "Orders ship within two business days."))
        elif self.path == "/go-off":
            self._send(302, location=f"{other_site}/offsite")
        elif self.path == "/offsite":
            self._send(200, _html("Elsewhere", "A page of another site entirely.", ("http://127.0.0.1/x",)))
        elif self.path == "/sitemap.xml":
            own = f"http://127.0.0.1:{self.port}"
            body = (
                '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                f"<url><loc>{own}/ok</loc></url><url><loc>{own}/go-off</loc></url></urlset>"
            )
            self._send(200, body.encode(), "application/xml")
        else:
            self._send(404, b"not found", "text/plain")


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    _Handler.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, name="knowledge-edge-site", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{_Handler.port}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


@pytest.fixture
def two_local_hosts(settings):
    """Both names of the test server allowlisted, so only the crawler's own same-site rule can refuse the hop."""
    settings.HELPDESK = {**settings.HELPDESK, "OUTBOUND_ALLOWED_HOSTS": ["127.0.0.1", "localhost"]}


def test_crawl_skips_an_on_site_link_that_redirects_to_another_host(base_url, two_local_hosts):
    pages = crawl_site(f"{base_url}/start", limits=LIMITS)
    assert isinstance(pages, FetchedPages)
    assert sorted(page.url for page in pages) == [f"{base_url}/ok", f"{base_url}/start"]
    assert pages.skipped == [(f"{base_url}/go-off", "the page redirects off the site, to localhost")]


def test_sitemap_skips_an_entry_that_redirects_to_another_host(base_url, two_local_hosts):
    pages = fetch_sitemap(f"{base_url}/sitemap.xml", limits=LIMITS)
    assert isinstance(pages, FetchedPages)
    assert [page.url for page in pages] == [f"{base_url}/ok"]
    assert pages.skipped == [(f"{base_url}/go-off", "the page redirects off the site, to localhost")]


def test_without_the_allowlist_the_policy_itself_refuses_the_off_site_hop(base_url):
    # Without "localhost" on the allowlist the policy itself refuses the hop: the start page still imports.
    pages = crawl_site(f"{base_url}/start", limits=LIMITS)
    assert isinstance(pages, FetchedPages)
    assert [url for url, _reason in pages.skipped] == [f"{base_url}/go-off"]
    with pytest.raises(IngestError, match="refused"):
        crawl_site(f"{base_url}/go-off", limits=LIMITS)


@pytest.mark.parametrize("glue", ["", " ", "\n"])
def test_a_long_unbreakable_run_is_cut_exactly_at_max_chars(glue):
    # 200,000 characters with no sentence end: every chunk is at most max_chars and nothing is lost or repeated.
    run = glue.join(["x" * 1500] * 40) + "y" * 140_000
    page = Page(url="", title="", sections=(Section(heading=("Log",), text=run),))
    chunks = chunk_page(page, max_chars=1000)
    assert all(0 < len(chunk.text) <= 1000 for chunk in chunks)
    # Whitespace at the cuts is dropped and merged pieces are joined by a space: compare the other characters.
    assert "".join("".join(chunk.text.split()) for chunk in chunks) == "".join(run.split())
    assert {chunk.heading for chunk in chunks} == {"Log"}
