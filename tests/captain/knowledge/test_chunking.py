"""Chunking keeps headings with their text and cuts only at paragraph, sentence or word boundaries."""

from __future__ import annotations

import re

import pytest

from captain.knowledge.ingest.chunking import Chunk, chunk_page
from captain.knowledge.ingest.extract import Page, Section, extract_document

EN = " ".join(f"Sentence {i} says that returns are free within thirty days." for i in range(60))
ZH = "".join(f"第{i}条：签收后三十天内可以免费退货！" for i in range(60))


def _page(*sections: Section) -> Page:
    return Page(url="https://help.example.com/returns", title="Returns", sections=sections)


def test_headings_stay_with_their_text_and_chunks_never_cross_sections():
    page = extract_document(
        b"# Returns\n\nReturns are free.\n\n## Refunds\n\nRefunds take 5 days.\n\n## Exchanges\n\nExchanges too.",
        file_name="returns.md",
    )
    assert chunk_page(page) == [
        Chunk("Returns", "Returns are free.", ""),
        Chunk("Returns > Refunds", "Refunds take 5 days.", ""),
        Chunk("Returns > Exchanges", "Exchanges too.", ""),
    ]


def test_long_english_section_splits_at_sentence_ends_within_max_chars():
    chunks = chunk_page(_page(Section(("Returns", "Policy"), EN)), max_chars=300)
    assert len(chunks) > 5
    assert all(len(chunk.text) <= 300 for chunk in chunks)
    assert all(
        chunk.heading == "Returns > Policy" and chunk.url == "https://help.example.com/returns"
        for chunk in chunks
    )
    for chunk in chunks:
        assert re.fullmatch(r"(Sentence \d+ says that returns are free within thirty days\. ?)+", chunk.text)
    assert " ".join(chunk.text for chunk in chunks) == EN  # nothing lost, nothing repeated


def test_long_chinese_section_splits_after_chinese_sentence_marks():
    chunks = chunk_page(_page(Section(("退货",), ZH)), max_chars=120)
    assert len(chunks) > 5
    assert all(len(chunk.text) <= 120 and chunk.text.endswith("！") for chunk in chunks)
    assert "".join(chunk.text for chunk in chunks) == ZH


def test_small_paragraphs_are_merged_up_to_max_chars():
    text = "\n\n".join(f"Paragraph {i} is short." for i in range(10))
    chunks = chunk_page(_page(Section(("FAQ",), text)), max_chars=100)
    assert [len(chunk.text) for chunk in chunks] == [
        len(chunk.text) for chunk in chunks if len(chunk.text) <= 100
    ]
    assert len(chunks) == 3  # 10 x 20 chars + separators, at most 100 per chunk
    assert chunks[0].text.startswith("Paragraph 0 is short.\n\nParagraph 1 is short.")


def test_an_unbreakable_sentence_is_cut_at_spaces_then_at_max_chars():
    words = " ".join(["refund"] * 50)  # one 349-character sentence with no sentence end
    chunks = chunk_page(_page(Section((), words)), max_chars=100)
    assert all(len(chunk.text) <= 100 for chunk in chunks)
    assert all(set(chunk.text.split()) == {"refund"} for chunk in chunks)  # no word cut in half
    token = "x" * 250  # no space at all: cut at max_chars, the only way to respect the limit
    assert [len(chunk.text) for chunk in chunk_page(_page(Section((), token)), max_chars=100)] == [
        100,
        100,
        50,
    ]


def test_no_empty_chunks():
    page = _page(Section(("A",), "\n\n   \n\nText.\n\n\n\n"), Section(("B",), "   "))
    assert chunk_page(page) == [Chunk("A", "Text.", "https://help.example.com/returns")]


def test_max_chars_too_small_is_refused():
    with pytest.raises(ValueError, match="max_chars"):
        chunk_page(_page(Section((), "x")), max_chars=5)
