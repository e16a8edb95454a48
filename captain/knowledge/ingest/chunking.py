"""Cut a page into passages for retrieval: headings stay with their text, sentences stay whole.

A chunk never crosses a section boundary (its heading says what it is about). Inside a section, paragraphs are
the first cut, then sentences (English ". ! ?" followed by a space; the Chinese full-width stop, exclamation and
question marks U+3002, U+FF01, U+FF1F with or without one), then spaces. A sentence longer than `max_chars` with
no space to cut at (a long run of Chinese without punctuation, a huge token) is cut at `max_chars` characters: no
chunk is ever longer than `max_chars`, and for Chinese a cut between two characters is not inside a word the way
it would be for English. Small neighbouring pieces are merged back up to `max_chars`, so a section of short
paragraphs becomes one chunk rather than many fragments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from captain.knowledge.ingest.document import Page

__all__ = ["Chunk", "chunk_page"]


@dataclass(frozen=True)
class Chunk:
    heading: str  # " > ".join(section.heading)
    text: str
    url: str


# After an English sentence end and its spaces, or right after a Chinese one (spaces optional).
_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*")


@dataclass(frozen=True)
class _Piece:
    text: str
    joiner: str  # what goes between the previous piece and this one when they are merged


def _split_long(text: str, max_chars: int) -> list[str]:
    """A sentence over max_chars: cut at the last space before the limit, else (no space) at the limit."""
    # Positions into `text`, not `text = text[cut:]`: re-slicing the rest copies it once per part, which made a
    # 4-million-character run without spaces take 2 s (quadratic; about a minute for a 20 MB upload).
    parts = []
    start, end = 0, len(text)
    while end - start > max_chars:
        cut = text.rfind(" ", start, start + max_chars + 1)
        if cut <= start:
            cut = start + max_chars
        parts.append(text[start:cut].rstrip())
        start = cut
        while start < end and text[start].isspace():
            start += 1
    if start < end:
        parts.append(text[start:])
    return parts


def _pieces(section_text: str, max_chars: int) -> list[_Piece]:
    pieces: list[_Piece] = []
    for paragraph in re.split(r"\n\s*\n", section_text):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        first = True
        units = (
            [paragraph]
            if len(paragraph) <= max_chars
            else [s for s in _SENTENCE.split(paragraph) if s.strip()]
        )
        for unit in units:
            for part in _split_long(unit.strip(), max_chars):
                if first:
                    joiner = "\n\n"
                elif re.search(r"[\u3000-\u9fff\uff00-\uffef]$", pieces[-1].text):
                    joiner = ""  # Chinese sentences follow each other without a space
                else:
                    joiner = " "
                pieces.append(_Piece(part, joiner))
                first = False
    return pieces


def chunk_page(page: Page, *, max_chars: int = 1000) -> list[Chunk]:
    if max_chars < 20:
        raise ValueError("max_chars must be at least 20")
    chunks: list[Chunk] = []
    for section in page.sections:
        heading = " > ".join(section.heading)
        current = ""
        for piece in _pieces(section.text, max_chars):
            candidate = f"{current}{piece.joiner}{piece.text}" if current else piece.text
            if len(candidate) <= max_chars:
                current = candidate
                continue
            chunks.append(Chunk(heading=heading, text=current, url=page.url))
            current = piece.text
        if current:
            chunks.append(Chunk(heading=heading, text=current, url=page.url))
    return chunks
