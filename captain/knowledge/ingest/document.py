"""What extraction produces: a page of sections, each under its headings."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Section:
    heading: tuple[
        str, ...
    ]  # the headings above this text, outermost first (h1 > h2 > h3; PDF: none or the title)
    text: str  # clean plain text, paragraphs separated by blank lines


@dataclass(frozen=True)
class Page:
    url: str  # "" for uploads
    title: str
    sections: tuple[Section, ...]

    @property
    def text_chars(self) -> int:
        return sum(len(section.text) for section in self.sections)


class SectionBuilder:
    """Collects text blocks under a heading stack: a new heading at level n closes everything at level >= n."""

    def __init__(self, root: tuple[str, ...] = ()) -> None:
        self._root = root
        self._stack: list[tuple[int, str]] = []
        self._blocks: list[str] = []
        self._sections: list[Section] = []

    def heading(self, level: int, text: str) -> None:
        text = " ".join(text.split())
        if not text:
            return
        self._flush()
        while self._stack and self._stack[-1][0] >= level:
            self._stack.pop()
        self._stack.append((level, text))

    def block(self, text: str) -> None:
        text = text.strip()
        if text:
            self._blocks.append(text)

    def _flush(self) -> None:
        if self._blocks:
            heading = self._root + tuple(text for _level, text in self._stack)
            self._sections.append(Section(heading=heading, text="\n\n".join(self._blocks)))
            self._blocks = []

    def sections(self) -> tuple[Section, ...]:
        self._flush()
        return tuple(self._sections)
