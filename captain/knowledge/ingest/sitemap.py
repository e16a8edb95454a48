"""Sitemaps (sitemaps.org): the page URLs of a `urlset`, or of each sitemap a `sitemapindex` lists (one level).

The XML streams into a defusedxml parser (no entity expansion, no external entities) whose target keeps only the
`<loc>` texts and stops at `max_sitemap_urls`: a sitemap with 100,000 URLs fails after reading about a thousand,
and nothing but the kept URLs is held in memory.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from xml.etree.ElementTree import ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser

from captain.knowledge.ingest.errors import IngestError

# Opens a URL and yields its body as it arrives (fetch._open with the policy, limits and error messages).
OpenUrl = Callable[[str], contextlib.AbstractContextManager[Iterator[bytes]]]


class _TooMany(Exception):
    pass


class _LocTarget:
    """An XML parser target that remembers the root element and the `<loc>` texts, and stops past `limit`."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.root = ""
        self.locations: list[str] = []
        self._text: list[str] | None = None

    @staticmethod
    def _local(tag: str) -> str:
        return tag.rsplit("}", 1)[-1]

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        if not self.root:
            self.root = self._local(tag)
        if self._local(tag) == "loc":
            self._text = []

    def data(self, text: str) -> None:
        if self._text is not None:
            self._text.append(text)

    def end(self, tag: str) -> None:
        if self._local(tag) == "loc" and self._text is not None:
            location = "".join(self._text).strip()
            self._text = None
            if location:
                self.locations.append(location)
                if len(self.locations) > self.limit:
                    raise _TooMany

    def close(self) -> None:
        return None


def _read(url: str, *, open_url: OpenUrl, limit: int) -> _LocTarget:
    target = _LocTarget(limit)
    parser = DefusedXMLParser(target=target)
    try:
        with open_url(url) as body:
            first = True
            for chunk in body:
                if first and chunk[:2] == b"\x1f\x8b":
                    raise IngestError("the sitemap is gzip-compressed (.xml.gz), which is not supported")
                first = False
                parser.feed(chunk)
            parser.close()
    except _TooMany:
        raise IngestError(f"the sitemap lists more than {limit} URLs; the limit is {limit}") from None
    except DefusedXmlException as exc:
        raise IngestError("the sitemap declares XML entities or a DTD feature, which are refused") from exc
    except ParseError as exc:
        raise IngestError(f"the sitemap is not valid XML ({exc})") from exc
    except LookupError as exc:  # expat's answer to <?xml encoding="..."?> naming no codec Python knows
        raise IngestError("the sitemap declares an unknown character encoding") from exc
    if target.root not in ("urlset", "sitemapindex"):
        raise IngestError(f"not a sitemap (its root element is <{target.root[:40] or 'none'}>)")
    return target


@dataclass
class SitemapLocations:
    pages: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (url, reason)


def sitemap_locations(url: str, *, open_url: OpenUrl, max_urls: int) -> SitemapLocations:
    """Every page URL of the sitemap at `url`; `max_urls` (FetchLimits.max_sitemap_urls) counts the URLs of all
    child sitemaps together."""
    found = SitemapLocations()
    top = _read(url, open_url=open_url, limit=max_urls)
    if top.root == "urlset":
        found.pages = top.locations
        return found
    for child in top.locations:
        left = max_urls - len(found.pages)
        try:
            sitemap = _read(child, open_url=open_url, limit=left)
        except IngestError as exc:
            if str(exc).startswith("the sitemap lists more than"):
                raise IngestError(
                    f"the sitemaps of the index list more than {max_urls} URLs; the limit is {max_urls}"
                ) from exc
            found.skipped.append((child, str(exc)))
            continue
        if sitemap.root != "urlset":
            found.skipped.append((child, "a sitemap index inside a sitemap index is not followed"))
            continue
        found.pages.extend(sitemap.locations)
    return found
