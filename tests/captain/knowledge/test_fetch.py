"""Fetching through the outbound policy from a real HTTP server on 127.0.0.1: pages, redirects, sitemaps, crawls,
and every bad answer turned into an IngestError naming the problem, within the size and time limits."""

from __future__ import annotations

import time

import pytest

from captain.knowledge.ingest.errors import IngestError
from captain.knowledge.ingest.fetch import FetchedPages, FetchLimits, crawl_site, fetch_page, fetch_sitemap
from tests.captain.knowledge.site_server import SiteServer, start_site

FAST = FetchLimits(request_seconds=1.0, total_seconds=5.0, max_page_bytes=200_000)


@pytest.fixture(scope="module")
def site() -> SiteServer:
    server = start_site()
    yield server
    server.stop()


@pytest.fixture
def requested(site):
    """The paths this test requested (the server's log from this test on)."""
    start = len(site.requests)
    return lambda: site.requests[start:]


def test_article_page_main_content_and_headings(site):
    page = fetch_page(f"{site.url}/article", limits=FAST)
    assert page.url == f"{site.url}/article"
    assert [section.heading for section in page.sections] == [
        ("Returning a scooter",),
        ("Returning a scooter", "Refund times"),
    ]
    text = " ".join(section.text for section in page.sections)
    assert "within 30 days" in text and "PayPal refunds take 2 business days" in text
    assert "cookie" not in text.lower() and "Copyright" not in text


def test_redirect_chain_is_followed_hop_by_hop(site, requested):
    page = fetch_page(f"{site.url}/redirect/3", limits=FAST)
    assert page.url == f"{site.url}/article"
    assert requested() == ["/redirect/3", "/redirect/2", "/redirect/1", "/article"]


def test_too_many_redirects(site):
    with pytest.raises(IngestError, match="the page redirects more than 2 times"):
        fetch_page(f"{site.url}/redirect/5", limits=FetchLimits(max_redirects=2, request_seconds=1.0))


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/to-private", r"the page redirects to 10\.0\.0\.1, which is refused: address is private"),
        (
            "/to-metadata",
            r"the page redirects to 169\.254\.169\.254, which is refused: address is a cloud metadata",
        ),
    ],
)
def test_redirect_to_a_private_address_is_refused_without_leaking_the_path(site, path, reason):
    with pytest.raises(IngestError, match=reason) as caught:
        fetch_page(f"{site.url}{path}", limits=FAST)
    assert "token" not in str(caught.value) and "meta-data" not in str(caught.value)


def test_a_redirect_to_a_malformed_url(site):
    with pytest.raises(IngestError, match="the page redirects to an invalid URL"):
        fetch_page(f"{site.url}/bad-location", limits=FAST)


def test_a_private_address_itself_is_refused():
    with pytest.raises(IngestError, match="the page address is refused: address is private"):
        fetch_page("http://10.1.2.3/help", limits=FAST)


def test_a_page_that_never_ends_stops_at_the_size_limit(site):
    started = time.monotonic()
    with pytest.raises(IngestError, match=r"the page is larger than 195 KB \(the limit\)"):
        fetch_page(f"{site.url}/endless", limits=FAST)
    assert time.monotonic() - started < 3


def test_a_page_that_never_ends_stops_at_the_time_limit(site):
    limits = FetchLimits(request_seconds=0.5, max_page_bytes=10**12)
    started = time.monotonic()
    with pytest.raises(IngestError, match=r"the page did not finish loading within 0\.5 s"):
        fetch_page(f"{site.url}/endless", limits=limits)
    assert time.monotonic() - started < 2


def test_a_slow_page_times_out(site):
    started = time.monotonic()
    with pytest.raises(IngestError, match=r"the page did not answer within 0\.5 s"):
        fetch_page(f"{site.url}/slow", limits=FetchLimits(request_seconds=0.5))
    assert time.monotonic() - started < 2


def test_the_total_time_limit_caps_each_request(site):
    started = time.monotonic()
    with pytest.raises(IngestError, match=r"within 0\.3 s"):
        fetch_page(f"{site.url}/slow", limits=FetchLimits(request_seconds=10, total_seconds=0.3))
    assert time.monotonic() - started < 2


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/missing", "the page answered HTTP 404"),
        ("/image.png", r"the page is not HTML \(image/png\)"),
        ("/script-only", "the HTML page has no visible text"),
    ],
)
def test_bad_pages(site, path, reason):
    with pytest.raises(IngestError, match=reason):
        fetch_page(f"{site.url}{path}", limits=FAST)


def test_https_only_for_hosts_not_allowlisted(settings):
    settings.HELPDESK = {**settings.HELPDESK, "OUTBOUND_ALLOWED_HOSTS": []}
    with pytest.raises(IngestError, match="refused: plain http is not allowed"):
        fetch_page(
            "http://93.184.215.14/help", limits=FAST
        )  # a public address literal: no DNS, never connected


def test_sitemap_pages_on_its_site(site):
    pages = fetch_sitemap(f"{site.url}/sitemap.xml", limits=FAST)
    assert isinstance(pages, FetchedPages)
    assert [page.url for page in pages] == [f"{site.url}/article", f"{site.url}/site/a"]
    assert pages.skipped == [("http://example.org/x", "not on the sitemap's site")]


def test_sitemap_index_reads_each_sitemap_and_counts_failures(site):
    progress: list[tuple[int, int]] = []
    pages = fetch_sitemap(
        f"{site.url}/sitemap-index.xml", limits=FAST, on_progress=lambda d, t: progress.append((d, t))
    )
    assert [page.url for page in pages] == [
        f"{site.url}/article",
        f"{site.url}/site/b",
        f"{site.url}/site/a/deep",
    ]
    assert pages.skipped == [(f"{site.url}/site/missing", "the page answered HTTP 404")]
    assert progress == [(1, 4), (2, 4), (3, 4), (4, 4)]


def test_sitemap_over_the_page_limit_imports_the_first_pages_and_says_so(site):
    pages = fetch_sitemap(
        f"{site.url}/sitemap-index.xml", limits=FetchLimits(max_pages=2, request_seconds=1.0)
    )
    assert len(pages) == 2
    assert pages.stopped == "the sitemap lists 4 pages; the first 2 were imported (the page limit)"


def test_sitemap_with_100000_urls_fails_after_reading_only_past_the_limit(site):
    started = time.monotonic()
    with pytest.raises(IngestError, match="the sitemap lists more than 1000 URLs; the limit is 1000"):
        fetch_sitemap(f"{site.url}/huge-sitemap.xml", limits=FAST)
    assert time.monotonic() - started < 3


def test_sitemap_index_limit_counts_all_its_sitemaps(site):
    with pytest.raises(IngestError, match="the sitemaps of the index list more than 3 URLs"):
        fetch_sitemap(
            f"{site.url}/sitemap-index.xml", limits=FetchLimits(max_sitemap_urls=3, request_seconds=1.0)
        )


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/entities.xml", "the sitemap declares XML entities"),
        ("/not-a-sitemap.xml", r"not a sitemap \(its root element is <html>\)"),
        ("/article", "not a sitemap|the sitemap is not valid XML"),
        ("/missing.xml", "the sitemap answered HTTP 404"),
    ],
)
def test_bad_sitemaps(site, path, reason):
    with pytest.raises(IngestError, match=reason):
        fetch_sitemap(f"{site.url}{path}", limits=FAST)


def test_crawl_stays_on_the_site_within_the_depth(site, requested):
    pages = crawl_site(f"{site.url}/site/", limits=FetchLimits(max_depth=2, request_seconds=1.0))
    assert sorted(page.url.removeprefix(site.url) for page in pages) == [
        "/site/",
        "/site/a",
        "/site/a/deep",
        "/site/b",
    ]
    assert pages.skipped == [(f"{site.url}/site/missing", "the page answered HTTP 404")]
    visited = requested()
    assert "/site/a/deeper" not in visited  # depth 3
    assert "/site/manual.pdf" not in visited  # not HTML
    assert len(visited) == len(set(visited))  # the fragment link is the same page, fetched once
    # The off-site link was never requested: it would be in `skipped` (it cannot resolve here) or fail the network guard.


def test_crawl_depth_three_reaches_the_deepest_page(site):
    pages = crawl_site(f"{site.url}/site/", limits=FetchLimits(max_depth=3, request_seconds=1.0))
    assert f"{site.url}/site/a/deeper" in [page.url for page in pages]


def test_crawl_respects_the_page_limit(site):
    pages = crawl_site(f"{site.url}/site/", limits=FetchLimits(max_pages=2, max_depth=3, request_seconds=1.0))
    assert len(pages) == 2
    assert pages.stopped.startswith("the page limit (2) ended the crawl")


def test_crawl_stops_at_the_total_time_limit_and_keeps_what_it_has(site):
    started = time.monotonic()
    pages = crawl_site(f"{site.url}/slow-site/", limits=FetchLimits(request_seconds=0.4, total_seconds=0.7))
    assert time.monotonic() - started < 2
    assert [page.url for page in pages] == [f"{site.url}/slow-site/"]
    assert pages.skipped[0] == (f"{site.url}/slow", "the page did not answer within 0.4 s")
    assert pages.stopped.startswith("the time limit (0.7 s) ended the crawl after 1 pages")


def test_crawl_whose_start_page_fails_names_the_reason(site):
    with pytest.raises(IngestError, match=r"the page redirects to 10\.0\.0\.1, which is refused"):
        crawl_site(f"{site.url}/to-private", limits=FAST)
