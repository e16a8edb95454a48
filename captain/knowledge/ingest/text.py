"""Plain text and Markdown: decoding with a binary check, Markdown headings into sections."""

from __future__ import annotations

import re

import charset_normalizer

from captain.knowledge.ingest.document import Section, SectionBuilder
from captain.knowledge.ingest.errors import IngestError

# Characters that never occur in text a person wrote: C0 controls other than tab, newlines and form feed.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
# More than this share of control or replacement characters means the bytes are not text, whatever they decode as.
MAX_CONTROL_SHARE = 0.01


def decode_text(data: bytes, *, what: str = "file") -> str:
    """`data` as text: UTF-8 (with or without BOM), UTF-16 with a BOM, else the encoding charset-normalizer finds
    (GB18030, Big5, cp1252 ...). Binary data is refused rather than stored as garbage."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise IngestError(f"the {what} is not valid UTF-16 text") from exc
    else:
        if b"\x00" in data:
            raise IngestError(f"the {what} is binary, not text (it contains NUL bytes)")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            best = charset_normalizer.from_bytes(data).best()
            if best is None:
                raise IngestError(f"the {what} is not text (its bytes decode in no known encoding)") from None
            text = str(best)
    if not text:
        return text
    odd = len(_CONTROL.findall(text)) + text.count("\ufffd")
    if odd / len(text) > MAX_CONTROL_SHARE:
        raise IngestError(f"the {what} looks binary, not text ({odd} control characters in {len(text)})")
    return text


def paragraphs(text: str) -> list[str]:
    """Blank-line separated paragraphs, each with its inner whitespace tidied (line breaks kept for lists)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    result = []
    for block in re.split(r"\n\s*\n", text):
        lines = [" ".join(line.split()) for line in block.splitlines()]
        block = "\n".join(line for line in lines if line)
        if block:
            result.append(block)
    return result


def plain_sections(text: str, *, title: str) -> tuple[Section, ...]:
    body = "\n\n".join(paragraphs(text))
    return (Section(heading=(title,) if title else (), text=body),) if body else ()


_ATX = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
_RULE = re.compile(r"^ {0,3}([-*_])( *\1){2,}\s*$")
_LINE_ITEMS = ("- ", "* ", "+ ", "|", "1.", "2.", "3.", "4.", "5.", "6.", "7.", "8.", "9.")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_EMPHASIS = re.compile(r"(\*\*|__|\*|_|`)(?=\S)(.+?)(?<=\S)\1")


def _inline(line: str) -> str:
    """Markdown inline syntax to plain text: links keep their URL (a customer may need it), images their alt."""
    line = _IMAGE.sub(r"\1", line)
    line = _LINK.sub(
        lambda m: m.group(1) if m.group(1) == m.group(2) else f"{m.group(1)} ({m.group(2)})", line
    )
    return _EMPHASIS.sub(r"\2", line)


def markdown_sections(text: str) -> tuple[str, tuple[Section, ...]]:
    """(title, sections): ATX (`## x`) and setext (underlined) headings become the heading stack; fenced code is
    kept as text and never read as headings. The title is the first level-1 heading."""
    builder = SectionBuilder()
    title = ""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    paragraph: list[str] = []
    in_fence = False

    def flush() -> None:
        # Soft-wrapped lines are one paragraph; list items and table rows keep their own lines.
        if paragraph:
            text = paragraph[0]
            for line in paragraph[1:]:
                text += ("\n" if line.startswith(_LINE_ITEMS) or in_fence else " ") + line
            builder.block(text)
            paragraph.clear()

    for line in lines:
        if _FENCE.match(line):
            flush()  # code is its own block, its lines kept as they are
            in_fence = not in_fence
            continue
        if in_fence:
            paragraph.append(line.rstrip())
            continue
        atx = _ATX.match(line)
        setext = _SETEXT.match(line) if len(paragraph) == 1 else None
        if atx or setext:
            if atx:
                level, heading = len(atx.group(1)), _inline(atx.group(2))
            else:
                assert setext is not None
                level, heading = (1 if setext.group(1)[0] == "=" else 2), _inline(paragraph.pop())
            flush()
            builder.heading(level, heading)
            if level == 1 and not title:
                title = " ".join(heading.split())
            continue
        if not line.strip() or ((_SETEXT.match(line) or _RULE.match(line)) and not paragraph):
            flush()  # a blank line ends a paragraph; a rule (---, ***) with no paragraph above is decoration
            continue
        stripped = line.strip()
        paragraph.append(
            _inline(stripped) if stripped.startswith(_LINE_ITEMS) else " ".join(_inline(line).split())
        )
    flush()
    return title, builder.sections()
