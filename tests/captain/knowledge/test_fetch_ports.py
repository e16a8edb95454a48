"""A knowledge import through the outbound policy's `host:port` allowlist, against real servers on 127.0.0.1: the
listed port's page is imported, another local port (a Redis-like service) is refused with the port named and
never connected to."""

from __future__ import annotations

import pytest

from captain.knowledge.ingest.errors import IngestError
from captain.knowledge.ingest.fetch import FetchLimits, fetch_page
from tests.helpdesk.outbound.raw_server import RawServer, http_answer, raw_answer

FAST = FetchLimits(request_seconds=2.0, total_seconds=5.0, max_page_bytes=200_000)
PAGE = b"<html><head><title>Returns</title></head><body><main><h1>Returns</h1><p>30 days.</p></main></body></html>"


def test_an_import_reaches_the_allowlisted_port_only(settings):
    with (
        RawServer(http_answer(200, PAGE, {"Content-Type": "text/html; charset=utf-8"})) as site,
        RawServer(raw_answer(b"-ERR unknown command\r\n")) as redis_like,
    ):
        settings.HELPDESK = {**settings.HELPDESK, "OUTBOUND_ALLOWED_HOSTS": [f"127.0.0.1:{site.port}"]}
        page = fetch_page(f"http://127.0.0.1:{site.port}/returns", limits=FAST)
        assert "30 days." in " ".join(section.text for section in page.sections)
        with pytest.raises(IngestError, match=f"port {redis_like.port} is not allowlisted"):
            fetch_page(f"http://127.0.0.1:{redis_like.port}/", limits=FAST)
        assert redis_like.requests == []
