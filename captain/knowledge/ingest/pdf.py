"""PDF text with pypdf: one section per page, encrypted and damaged files refused with the reason."""

from __future__ import annotations

import io
import re
from collections.abc import Callable

import pypdf
from pypdf.errors import FileNotDecryptedError

from captain.knowledge.ingest.document import Section
from captain.knowledge.ingest.errors import IngestError
from captain.knowledge.ingest.text import paragraphs

_CJK_END = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]$")
_CJK_START = re.compile(r"^[\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]")


def _page_text(raw: str) -> str:
    """pypdf gives one line per laid-out line: lines are joined into paragraphs (with no space between two Chinese
    characters, where a space would be wrong), blank lines stay paragraph breaks."""
    result = []
    for block in paragraphs(raw):
        text = ""
        for line in block.split("\n"):
            if text and not (_CJK_END.search(text) and _CJK_START.search(line)):
                text += " "
            text += line
        result.append(text)
    return "\n\n".join(result)


def _reader(data: bytes) -> pypdf.PdfReader:
    # A truncated download or upload lacks the end-of-file marker; pypdf would rebuild what it can and return a
    # document silently missing its end, so a missing marker is a damaged file.
    if b"%%EOF" not in data[-2048:]:
        raise IngestError("the PDF is damaged or truncated (no end-of-file marker)")
    try:
        reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            # Many PDFs are encrypted only to set permissions, with an empty password anyone may open them with.
            try:
                opened = reader.decrypt("")
            except (FileNotDecryptedError, NotImplementedError) as exc:
                raise IngestError("the PDF is encrypted (password protected)") from exc
            if not opened:
                raise IngestError("the PDF is encrypted (password protected)")
        len(reader.pages)  # reads the page tree: a broken one fails here, not halfway through
    except IngestError:
        raise
    except Exception as exc:
        # pypdf meets hostile or broken files with whatever its parser hits (PdfReadError, LimitReachedError,
        # NotImplementedError for a mangled filter name, KeyError, RecursionError ...): each means "cannot read".
        raise IngestError(f"the PDF is damaged ({type(exc).__name__})") from exc
    return reader


def pdf_document(
    data: bytes, *, on_progress: Callable[[int, int], None] | None = None
) -> tuple[str, tuple[Section, ...]]:
    """(title, sections): the document title (metadata) heads every page's section when there is one."""
    reader = _reader(data)
    try:
        metadata = reader.metadata
        title = " ".join(str((metadata.title if metadata is not None else "") or "").split())
    except Exception:  # a broken info dictionary costs the title, not the document
        title = ""
    heading = (title,) if title else ()
    total = len(reader.pages)
    sections: list[Section] = []
    for number, page in enumerate(reader.pages, start=1):
        try:
            text = _page_text(page.extract_text() or "")
        except Exception as exc:  # any parser failure, as in _reader
            raise IngestError(
                f"the PDF is damaged: page {number} cannot be read ({type(exc).__name__})"
            ) from exc
        if text:
            sections.append(Section(heading=heading, text=text))
        if on_progress is not None:
            on_progress(number, total)
    if not sections:
        raise IngestError(
            f"the PDF has no text in its {total} page(s) (scanned images would need OCR, which is not supported)"
        )
    return title, tuple(sections)
