"""Pages from the web: one URL, a sitemap, or a bounded same-site crawl, every request through the outbound policy.

`helpdesk.outbound.outbound_client` checks each connection's real address and limits each answer's size and time;
it follows no redirects, so `_open` follows them here, each hop a new checked request (a redirect to 10.0.0.1 is
refused like a link to it). `FetchLimits` bounds everything else: pages, depth, sitemap size and the total time of
one import, so a hostile or broken site costs at most `total_seconds` and `max_page_bytes` per page.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import urldefrag, urljoin, urlsplit

import httpx
import lxml.etree
import lxml.html

from captain.knowledge.ingest.document import Page
from captain.knowledge.ingest.errors import IngestError, human_size
from captain.knowledge.ingest.extract import extract_document
from captain.knowledge.ingest.sitemap import sitemap_locations
from helpdesk.outbound import OutboundRefused, ResponseTooLarge, check_url, outbound_client

logger = logging.getLogger(__name__)

__all__ = ["FetchLimits", "FetchedPages", "crawl_site", "fetch_page", "fetch_sitemap"]

Progress = Callable[[int, int], None]
_REDIRECTS = (301, 302, 303, 307, 308)
# A name a site's operator can recognise in their logs (httpx's default says only "python-httpx").
_HEADERS = {
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.5",
    "User-Agent": "CaptainHelpdesk-Knowledge/1.0 (imports a help centre for its support assistant)",
}
_HTML_TYPES = ("text/html", "application/xhtml+xml")
# Links a crawl does not follow: their targets are not HTML pages.
_NOT_HTML = (
    ".pdf", ".zip", ".gz", ".tar", ".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".ico", ".css", ".js",
    ".json", ".xml", ".mp3", ".mp4", ".mov", ".avi", ".doc", ".docx", ".xls", ".xlsx", ".ppt", ".pptx", ".exe",
    ".dmg", ".woff", ".woff2", ".ttf",
)  # fmt: skip


@dataclass(frozen=True)
class FetchLimits:
    max_pages: int = 50
    max_depth: int = 2
    max_page_bytes: int = 5_000_000
    request_seconds: float = 15.0
    total_seconds: float = 300.0
    max_sitemap_urls: int = 1000
    max_redirects: int = 5


class FetchedPages(list[Page]):
    """The pages of a sitemap or crawl, plus what did not make it: `skipped` lists (url, reason) of pages that
    failed, `stopped` says which limit ended the import early ("" when it ran to the end)."""

    def __init__(self) -> None:
        super().__init__()
        self.skipped: list[tuple[str, str]] = []
        self.stopped = ""


class _Budget:
    """The import's total time: each request gets its own limit, never more than what is left."""

    def __init__(self, limits: FetchLimits) -> None:
        self.limits = limits
        self._deadline = time.monotonic() + limits.total_seconds

    def left(self) -> float:
        return self._deadline - time.monotonic()

    def request_seconds(self) -> float:
        left = self.left()
        if left <= 0:
            raise IngestError(f"the import took longer than its time limit ({self.limits.total_seconds:g} s)")
        return min(self.limits.request_seconds, left)


def _host(url: str | httpx.URL) -> str:
    """The host only, for messages: a URL's path or query may hold a token."""
    try:
        return httpx.URL(str(url)).host or "?"
    except httpx.InvalidURL:
        return "?"


def _origin(url: str | httpx.URL) -> tuple[str, str, int | None] | None:
    """(scheme, host, port): what "the same site" compares. None for a URL that does not parse."""
    try:
        parsed = httpx.URL(str(url))
    except httpx.InvalidURL:
        return None
    return parsed.scheme, parsed.host, parsed.port


@dataclass
class _Opened:
    url: str  # after redirects
    content_type: str
    response: httpx.Response


@contextlib.contextmanager
def _open(url: str, *, budget: _Budget, max_bytes: int, what: str = "page") -> Iterator[_Opened]:
    """GET `url`, following redirects hop by hop through the policy; the body is left to stream (and stops at
    `max_bytes` or the request's time limit). Every failure is an IngestError naming the problem."""
    limits = budget.limits
    current = url
    hops = 0
    with contextlib.ExitStack() as stack:
        while True:
            seconds = budget.request_seconds()
            client = stack.enter_context(outbound_client(timeout=seconds, max_response_bytes=max_bytes))
            try:
                # The address first: "address is private" says more than the transport's scheme check would
                # ("plain http is not allowed") for a redirect to http://10.0.0.1/. The transport checks again on
                # the address it really connects to.
                check_url(current)
                response = stack.enter_context(client.stream("GET", current, headers=_HEADERS))
            except ResponseTooLarge as exc:
                raise IngestError(f"the {what} is larger than {human_size(max_bytes)} (the limit)") from exc
            except OutboundRefused as exc:
                if hops:
                    raise IngestError(
                        f"the {what} redirects to {_host(current)}, which is refused: {exc}"
                    ) from exc
                raise IngestError(f"the {what} address is refused: {exc}") from exc
            except httpx.TimeoutException as exc:
                raise IngestError(f"the {what} did not answer within {seconds:.3g} s") from exc
            except httpx.HTTPError as exc:
                raise IngestError(
                    f"the {what} could not be fetched from {_host(current)} ({type(exc).__name__})"
                ) from exc
            if response.status_code in _REDIRECTS:
                location = response.headers.get("Location", "").strip()
                if not location:
                    raise IngestError(f"the {what} redirects (HTTP {response.status_code}) with no Location")
                hops += 1
                if hops > limits.max_redirects:
                    raise IngestError(f"the {what} redirects more than {limits.max_redirects} times")
                try:
                    current = urljoin(str(response.url), location)
                except ValueError as exc:  # "http://[oops": urllib refuses the bracketed host
                    raise IngestError(f"the {what} redirects to an invalid URL") from exc
                continue
            if response.status_code >= 400:
                raise IngestError(f"the {what} answered HTTP {response.status_code}")
            content_type = response.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
            try:
                yield _Opened(url=str(response.url), content_type=content_type, response=response)
            except ResponseTooLarge as exc:
                raise IngestError(f"the {what} is larger than {human_size(max_bytes)} (the limit)") from exc
            except OutboundRefused as exc:
                raise IngestError(f"the {what} is refused: {exc}") from exc
            except httpx.TimeoutException as exc:
                raise IngestError(
                    f"the {what} did not finish loading within {seconds:.3g} s (it may never end)"
                ) from exc
            except httpx.HTTPError as exc:
                raise IngestError(f"the {what} broke off while loading ({type(exc).__name__})") from exc
            return


def _download_html(url: str, budget: _Budget) -> tuple[str, bytes]:
    """(final url, body) of an HTML page; other content types are refused."""
    with _open(url, budget=budget, max_bytes=budget.limits.max_page_bytes) as opened:
        if opened.content_type and opened.content_type not in _HTML_TYPES:
            raise IngestError(f"the page is not HTML ({opened.content_type[:60]})")
        return opened.url, opened.response.read()


def _download_on_site(url: str, budget: _Budget, host: str) -> tuple[str, bytes]:
    """`_download_html` for a page of a sitemap or crawl, which must end on the site's host: a link that redirects
    to another host is refused, or importing one site would bring in any site its links redirect to. Only the host
    is compared, so an http -> https upgrade on the same host stays on the site."""
    final_url, body = _download_html(url, budget)
    if _host(final_url) != host:
        raise IngestError(f"the page redirects off the site, to {_host(final_url)}")
    return final_url, body


def _page(final_url: str, body: bytes) -> Page:
    path = urlsplit(final_url).path.rstrip("/").rsplit("/", 1)[-1] or "index"
    return extract_document(body, file_name=f"{path}.html", content_type="text/html", url=final_url)


def fetch_page(url: str, *, limits: FetchLimits = FetchLimits()) -> Page:
    """One HTML page's main content. IngestError for a refused address (the URL or any redirect hop), too many
    redirects, an HTTP error, a timeout, a page over `max_page_bytes` (or one that never ends), non-HTML content,
    or a page with no visible text."""
    final_url, body = _download_html(url, _Budget(limits))
    return _page(final_url, body)


def _fetch_each(
    urls: list[str], *, host: str, budget: _Budget, pages: FetchedPages, on_progress: Progress | None
) -> None:
    for done, url in enumerate(urls, start=1):
        if budget.left() <= 0:
            pages.stopped = (
                f"the time limit ({budget.limits.total_seconds:g} s) ended the import after {done - 1} of "
                f"{len(urls)} pages"
            )
            return
        try:
            pages.append(_page(*_download_on_site(url, budget, host)))
        except IngestError as exc:
            pages.skipped.append((url, str(exc)))
        if on_progress is not None:
            on_progress(done, len(urls))


def _none_fetched(pages: FetchedPages, what: str) -> IngestError:
    reason = pages.skipped[0][1] if pages.skipped else "nothing to fetch"
    return IngestError(
        f"no page of the {what} could be imported ({len(pages.skipped)} failed; first: {reason})"
    )


def fetch_sitemap(
    url: str, *, limits: FetchLimits = FetchLimits(), on_progress: Progress | None = None
) -> list[Page]:
    """The pages a sitemap (or a sitemap index, one level deep) lists, on the sitemap's own site. A sitemap that
    lists more than `max_sitemap_urls` URLs fails (it is not read further, so a huge one costs little); when it
    lists more than `max_pages`, the first `max_pages` are imported and `FetchedPages.stopped` says so."""
    budget = _Budget(limits)
    pages = FetchedPages()

    @contextlib.contextmanager
    def open_sitemap(sitemap_url: str) -> Iterator[Iterator[bytes]]:
        with _open(sitemap_url, budget=budget, max_bytes=limits.max_page_bytes, what="sitemap") as opened:
            yield opened.response.iter_bytes()

    locations = sitemap_locations(url, open_url=open_sitemap, max_urls=limits.max_sitemap_urls)
    site = _origin(url)
    urls: list[str] = []
    for location in locations.pages:
        if _origin(location) != site:
            pages.skipped.append((location, "not on the sitemap's site"))
        elif location not in urls:
            urls.append(location)
    pages.skipped.extend(locations.skipped)
    if len(urls) > limits.max_pages:
        pages.stopped = f"the sitemap lists {len(urls)} pages; the first {limits.max_pages} were imported (the page limit)"
        urls = urls[: limits.max_pages]
    _fetch_each(urls, host=_host(url), budget=budget, pages=pages, on_progress=on_progress)
    if not pages:
        raise _none_fetched(pages, "sitemap")
    return pages


def _links(body: bytes, base: str) -> list[str]:
    try:
        tree = lxml.html.document_fromstring(body)
    except (lxml.etree.ParserError, ValueError):
        return []
    links = []
    for anchor in tree.iter("a"):
        href = (anchor.get("href") or "").strip()
        if not href or href.startswith(("#", "mailto:", "tel:", "javascript:", "data:")):
            continue
        try:
            links.append(urldefrag(urljoin(base, href))[0])
        except ValueError:  # a malformed link ("http://[oops") is not followed; the page itself is fine
            continue
    return links


def crawl_site(
    url: str, *, limits: FetchLimits = FetchLimits(), on_progress: Progress | None = None
) -> list[Page]:
    """Breadth-first over links on the start page's site (same scheme, host and port), at most `max_depth` links
    away and `max_pages` pages; fragments, duplicates and links to non-HTML files are skipped. A page that fails is
    skipped and listed in `FetchedPages.skipped`; the crawl fails when the start page cannot be downloaded (nothing
    else can be reached then) or when no page yields text."""
    budget = _Budget(limits)
    pages = FetchedPages()
    start = urldefrag(url)[0]
    final_url, body = _download_html(start, budget)  # the start page's failure is the crawl's
    site = _origin(final_url)
    seen = {start, final_url}
    queue: deque[tuple[str, int, bytes | None]] = deque([(final_url, 0, body)])
    while queue:
        if len(pages) >= limits.max_pages:
            pages.stopped = (
                f"the page limit ({limits.max_pages}) ended the crawl with {len(queue)} links unvisited"
            )
            break
        if budget.left() <= 0:
            pages.stopped = (
                f"the time limit ({limits.total_seconds:g} s) ended the crawl after {len(pages)} pages"
            )
            break
        page_url, depth, page_body = queue.popleft()
        try:
            if page_body is None:
                page_url, page_body = _download_on_site(page_url, budget, _host(final_url))
                seen.add(page_url)
            pages.append(_page(page_url, page_body))
        except IngestError as exc:
            pages.skipped.append((page_url, str(exc)))
            logger.info("crawl of %s skipped a page: %s", _host(start), exc)
        if page_body is not None and depth < limits.max_depth:
            for link in _links(page_body, page_url):
                if link in seen or _origin(link) != site:
                    continue
                if urlsplit(link).path.lower().endswith(_NOT_HTML):
                    continue
                seen.add(link)
                queue.append((link, depth + 1, None))
        if on_progress is not None:
            # The total is what is known so far: done plus the queued pages the page limit still allows.
            done = len(pages) + len(pages.skipped)
            on_progress(done, done + min(len(queue), max(limits.max_pages - len(pages), 0)))
    if not pages:
        raise _none_fetched(pages, "site")
    return pages
