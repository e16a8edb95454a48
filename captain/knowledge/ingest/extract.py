"""One entry point for an uploaded or fetched document: pick the format, check the size, extract the text."""

from __future__ import annotations

import os
from collections.abc import Callable

from captain.conf import captain_setting
from captain.knowledge.ingest.document import Page, Section
from captain.knowledge.ingest.errors import IngestError, human_size
from captain.knowledge.ingest.html_content import html_document
from captain.knowledge.ingest.pdf import pdf_document
from captain.knowledge.ingest.text import decode_text, markdown_sections, plain_sections

__all__ = ["FORMATS", "Page", "Section", "detect_format", "extract_document"]

FORMATS = ("text", "markdown", "html", "pdf")
_CONTENT_TYPES = {
    "text/plain": "text",
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
    "text/html": "html",
    "application/xhtml+xml": "html",
    "application/pdf": "pdf",
}
_EXTENSIONS = {
    ".txt": "text",
    ".text": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".pdf": "pdf",
}
# Types a browser or client sends when it knows nothing: the extension and the bytes decide instead.
_GENERIC_TYPES = ("", "application/octet-stream", "binary/octet-stream")


def _looks_html(data: bytes) -> bool:
    head = data[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith((b"<!doctype html", b"<html", b"<head", b"<body"))


def detect_format(data: bytes, *, file_name: str, content_type: str = "") -> str:
    """ "text", "markdown", "html" or "pdf". The PDF signature wins (a PDF named .txt is still a PDF); then the
    declared type, then the extension, then HTML's opening tag. IngestError names what is not supported."""
    if data.startswith(b"%PDF-"):
        return "pdf"
    mime = content_type.split(";", 1)[0].strip().lower()
    extension = os.path.splitext(file_name.lower())[1]
    if mime in _CONTENT_TYPES:
        # A Markdown file is often sent as text/plain: its extension is the better witness then.
        if mime == "text/plain" and _EXTENSIONS.get(extension) == "markdown":
            return "markdown"
        return _CONTENT_TYPES[mime]
    if extension in _EXTENSIONS:
        return _EXTENSIONS[extension]
    if mime in _GENERIC_TYPES and _looks_html(data):
        return "html"
    what = mime if mime not in _GENERIC_TYPES else (extension or "a file with no extension")
    raise IngestError(f"unsupported file type ({what[:60]}); upload text, Markdown, HTML or PDF")


def extract_document(
    data: bytes,
    *,
    file_name: str,
    content_type: str = "",
    url: str = "",
    on_progress: Callable[[int, int], None] | None = None,
) -> Page:
    """The document's title and headed sections. IngestError (its message is the document's failed status) for an
    empty or oversized file, an unsupported type, an encrypted, damaged or text-less PDF, binary data posing as
    text, or HTML with no visible text. `on_progress(done, total)` is called per PDF page."""
    if not data:
        raise IngestError("the file is empty (0 bytes)")
    limit = int(captain_setting("KNOWLEDGE_MAX_UPLOAD_BYTES"))
    if len(data) > limit:
        raise IngestError(f"the file is {human_size(len(data))}; the limit is {human_size(limit)}")
    kind = detect_format(data, file_name=file_name, content_type=content_type)
    stem = os.path.splitext(os.path.basename(file_name))[0].strip()
    sections: tuple[Section, ...]
    if kind == "pdf":
        title, sections = pdf_document(data, on_progress=on_progress)
    elif kind == "html":
        title, sections = html_document(data, url=url)
    else:
        text = decode_text(data)
        if kind == "markdown":
            title, sections = markdown_sections(text)
        else:
            title, sections = "", plain_sections(text, title="")
    if not sections:
        raise IngestError("the file has no text")
    return Page(url=url, title=title or stem, sections=sections)
