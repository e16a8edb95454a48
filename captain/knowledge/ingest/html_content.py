"""HTML main content with trafilatura, headings kept.

trafilatura was picked over readability-lxml by measurement (bench/knowledge/extraction_compare.py: 100% of the
article's sentences kept against 89%, the same noise, every h2/h3 kept; readability dropped a Chinese table).
Its `bare_extraction` body is an XML tree of `head rend="hN"`, `p`, `list/item`, `table/row/cell`, `quote`,
`code` elements, walked here into sections. Pages too short for trafilatura's heuristics fall back to the
visible text of the page without its scripts, navigation and footer.
"""

from __future__ import annotations

import re
from configparser import ConfigParser

import lxml.etree
import lxml.html
import trafilatura
from trafilatura.settings import use_config

from captain.knowledge.ingest.document import Section, SectionBuilder
from captain.knowledge.ingest.errors import IngestError


def _config() -> ConfigParser:
    config = use_config()
    # A help-centre answer is often two sentences; trafilatura's defaults drop pages under 250 characters.
    config.set("DEFAULT", "MIN_EXTRACTED_SIZE", "1")
    config.set("DEFAULT", "MIN_OUTPUT_SIZE", "1")
    # Its signal-based timeout works only in a main thread; the fetch limits bound the input instead.
    config.set("DEFAULT", "EXTRACTION_TIMEOUT", "0")
    return config


_CONFIG = _config()
_HEADING = re.compile(r"^h([1-6])$")
_BOILERPLATE_TAGS = (
    "script",
    "style",
    "noscript",
    "template",
    "nav",
    "header",
    "footer",
    "aside",
    "form",
    "svg",
)


# trafilatura's block elements (and `lb`, a line break): text on either side of one is two words, while inline
# elements (`hi` for bold, `ref` for a link) join their text to the word around them, as a browser shows it.
_BLOCKS = frozenset({"list", "item", "p", "head", "table", "row", "cell", "quote", "code", "lb"})


def _text(element: lxml.etree._Element) -> str:
    parts: list[str] = []

    def walk(node: lxml.etree._Element) -> None:
        parts.append(node.text or "")
        for child in node:
            block = child.tag in _BLOCKS
            parts.append(" " if block else "")
            walk(child)
            parts.append(" " if block else "")
            parts.append(child.tail or "")

    walk(element)
    return " ".join("".join(parts).split())


def _block(element: lxml.etree._Element) -> str:
    """One body element of trafilatura's tree as plain text: lists one item a line, tables one row a line."""
    if element.tag == "list":
        # Direct items only: a nested list is part of its item's text, not a second copy of it.
        return "\n".join(f"- {_text(item)}" for item in element.findall("item") if _text(item))
    if element.tag == "table":
        rows = []
        for row in element.iter("row"):
            cells = [_text(cell) for cell in row.iter("cell")]
            if any(cells):
                rows.append(" | ".join(cells))
        return "\n".join(rows)
    if element.tag == "code":
        return "".join(element.itertext()).strip()
    return _text(element)


def _walk(body: lxml.etree._Element, builder: SectionBuilder) -> None:
    for element in body:
        if element.tag == "head":
            match = _HEADING.match(element.get("rend", "h2"))
            builder.heading(int(match.group(1)) if match else 2, _text(element))
        elif element.tag in ("div", "main", "article", "section"):
            _walk(element, builder)
        else:
            builder.block(_block(element))


def _fallback(data: bytes) -> tuple[str, SectionBuilder]:
    """The page's visible text, headings kept, for pages trafilatura returns nothing for (very short ones)."""
    try:
        tree = lxml.html.document_fromstring(data)
    except (lxml.etree.ParserError, ValueError):
        return "", SectionBuilder()
    for element in list(tree.iter(*_BOILERPLATE_TAGS)):
        element.drop_tree()
    builder = SectionBuilder()
    body = tree.find("body")
    for element in (body if body is not None else tree).iter():
        tag = element.tag if isinstance(element.tag, str) else ""
        match = _HEADING.match(tag)
        if match:
            builder.heading(int(match.group(1)), _text(element))
        elif tag in ("p", "li", "td", "th", "pre", "blockquote", "dd", "dt"):
            builder.block(_text(element))
    title_element = tree.find(".//title")
    return (_text(title_element) if title_element is not None else ""), builder


def html_document(data: bytes, *, url: str = "") -> tuple[str, tuple[Section, ...]]:
    """(title, sections) of an HTML page's main content. IngestError when no visible text remains."""
    try:
        document = trafilatura.bare_extraction(
            data,
            url=url or None,
            include_tables=True,
            include_comments=False,
            with_metadata=True,
            config=_CONFIG,
        )
    except (lxml.etree.LxmlError, ValueError) as exc:
        raise IngestError("the HTML cannot be parsed") from exc
    title = ""
    sections: tuple[Section, ...] = ()
    body = getattr(document, "body", None)  # a Document (as_dict=False), or None when nothing was found
    if body is not None:
        title = " ".join((getattr(document, "title", "") or "").split())
        has_h1 = any(head.get("rend") == "h1" for head in body.iter("head"))
        # Without an h1 in the article, the page title is its outermost heading, so every chunk says what page
        # it comes from.
        builder = SectionBuilder(root=() if has_h1 or not title else (title,))
        _walk(body, builder)
        sections = builder.sections()
    if not sections:
        fallback_title, builder = _fallback(data)
        title = title or fallback_title
        sections = builder.sections()
    if not sections:
        raise IngestError("the HTML page has no visible text (only scripts, styles or navigation)")
    return title, sections
