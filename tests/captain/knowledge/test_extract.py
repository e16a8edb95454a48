"""Extraction of uploads: real PDF, Markdown, HTML and text files, and every bad file refused with its reason."""

from __future__ import annotations

import os

import pytest

from captain.knowledge.ingest.errors import IngestError
from captain.knowledge.ingest.extract import Section, detect_format, extract_document
from tests.captain.knowledge.pdf_files import blank_pdf, encrypted, pdf_with_pages

PAGE_ONE = "Returning a scooter. You can return a scooter within 30 days of delivery."
PAGE_TWO = "Refund times. Card refunds take 5 business days; PayPal refunds take 2 business days."


@pytest.fixture(scope="module")
def two_page_pdf() -> bytes:
    return pdf_with_pages([PAGE_ONE, PAGE_TWO], title="Northwind returns")


def _text(page) -> str:
    return "\n\n".join(section.text for section in page.sections)


def test_pdf_pages_become_sections_with_the_title_and_progress_per_page(two_page_pdf):
    progress: list[tuple[int, int]] = []
    page = extract_document(
        two_page_pdf,
        file_name="returns.pdf",
        content_type="application/pdf",
        on_progress=lambda d, t: progress.append((d, t)),
    )
    assert page.title == "Northwind returns"
    assert [section.text for section in page.sections] == [PAGE_ONE, PAGE_TWO]
    assert all(section.heading == ("Northwind returns",) for section in page.sections)
    assert progress == [(1, 2), (2, 2)]
    assert page.url == ""


def test_pdf_is_recognised_by_its_signature_whatever_its_name(two_page_pdf):
    assert (
        detect_format(two_page_pdf, file_name="upload.bin", content_type="application/octet-stream") == "pdf"
    )
    assert PAGE_TWO in _text(extract_document(two_page_pdf, file_name="notes.txt"))


def test_encrypted_pdf_is_refused(two_page_pdf):
    with pytest.raises(IngestError, match="the PDF is encrypted"):
        extract_document(encrypted(two_page_pdf, user_password="s3cret"), file_name="locked.pdf")


def test_pdf_encrypted_only_for_permissions_opens_with_the_empty_password(two_page_pdf):
    page = extract_document(encrypted(two_page_pdf, user_password=""), file_name="permissions.pdf")
    assert PAGE_ONE in _text(page)


@pytest.mark.parametrize("cut", [0.5, 0.9])
def test_truncated_pdf_is_refused_as_damaged(two_page_pdf, cut):
    with pytest.raises(IngestError, match="the PDF is damaged"):
        extract_document(two_page_pdf[: int(len(two_page_pdf) * cut)], file_name="broken.pdf")


def test_garbage_named_pdf_is_refused_as_damaged():
    with pytest.raises(IngestError, match="the PDF is damaged"):
        extract_document(b"%PDF-1.7\n" + os.urandom(3000) + b"\n%%EOF\n", file_name="noise.pdf")


def test_pdf_without_text_is_refused_with_the_reason():
    with pytest.raises(IngestError, match=r"the PDF has no text in its 2 page\(s\).*OCR"):
        extract_document(blank_pdf(pages=2), file_name="scan.pdf")


def test_markdown_headings_become_the_heading_stack():
    markdown = (
        "# Returns\n\nYou can return items within **30 days**.\nSee [the policy](https://help.example.com/p).\n\n"
        "## Refunds\n\nRefunds take 5 days.\n\n- card\n- PayPal\n\n### Cards\n\nCard refunds: 5 days.\n\n"
        "## Exchanges\n\n```\n# not a heading\n```\n\nExchanges are free.\n"
    )
    page = extract_document(markdown.encode(), file_name="returns.md")
    assert page.title == "Returns"
    assert page.sections == (
        Section(
            ("Returns",), "You can return items within 30 days. See the policy (https://help.example.com/p)."
        ),
        Section(("Returns", "Refunds"), "Refunds take 5 days.\n\n- card\n- PayPal"),
        Section(("Returns", "Refunds", "Cards"), "Card refunds: 5 days."),
        Section(("Returns", "Exchanges"), "# not a heading\n\nExchanges are free."),
    )


def test_markdown_sent_as_text_plain_is_still_markdown():
    page = extract_document(b"# Hours\n\nWe open at 9.", file_name="hours.md", content_type="text/plain")
    assert page.sections == (Section(("Hours",), "We open at 9."),)


def test_html_keeps_the_article_and_its_headings_and_drops_nav_footer_script():
    html = """<html><head><title>Returns | Help</title><script>var secretTracker = 1;</script></head><body>
    <nav><a href="/">Home</a><a href="/faq">All FAQs</a></nav>
    <main><article><h1>Returning a scooter</h1><p>You can return a scooter within 30 days of delivery.</p>
    <h2>Refund times</h2><table><tr><th>Method</th><th>Days</th></tr><tr><td>Card</td><td>5</td></tr></table>
    <h3>PayPal</h3><p>PayPal refunds take 2 business days.</p></article></main>
    <footer>Copyright 2026 Northwind. All rights reserved.</footer></body></html>"""
    page = extract_document(html.encode(), file_name="returns.html", url="https://help.example.com/returns")
    assert page.url == "https://help.example.com/returns"
    assert page.sections == (
        Section(("Returning a scooter",), "You can return a scooter within 30 days of delivery."),
        Section(("Returning a scooter", "Refund times"), "Method | Days\nCard | 5"),
        Section(("Returning a scooter", "Refund times", "PayPal"), "PayPal refunds take 2 business days."),
    )
    text = _text(page)
    assert "secretTracker" not in text and "All FAQs" not in text and "Copyright" not in text


def test_a_short_html_answer_is_kept():
    page = extract_document(b"<html><body><nav>Menu</nav><h1>Hours</h1><p>We open at 9.</p></body></html>",
                            file_name="hours.html")  # fmt: skip
    assert page.sections == (Section(("Hours",), "We open at 9."),)


def test_html_that_is_all_script_is_refused():
    html = b"<html><head><script>var a = 1;</script><style>p{}</style></head><body><script>go()</script></body></html>"
    with pytest.raises(IngestError, match="the HTML page has no visible text"):
        extract_document(html, file_name="app.html")


def test_chinese_text_in_every_format():
    zh = "退货政策。您可以在签收后三十天内申请退货。"
    assert _text(extract_document(zh.encode(), file_name="zh.txt")) == zh
    assert _text(extract_document(zh.encode("gb18030"), file_name="zh-gbk.txt")) == zh
    assert _text(extract_document(zh.encode("utf-16"), file_name="zh-16.txt")) == zh
    md = extract_document(f"# 退货\n\n{zh}".encode(), file_name="zh.md")
    assert md.sections == (Section(("退货",), zh),)
    html = extract_document(
        f"<html><body><h1>退货</h1><p>{zh}</p></body></html>".encode(), file_name="zh.html"
    )
    assert html.sections == (Section(("退货",), zh),)


def test_plain_text_paragraphs_are_tidied_and_the_file_name_is_the_title():
    page = extract_document(
        b"First  line\r\nsame paragraph.\r\n\r\n\r\nSecond paragraph.  ", file_name="notes.txt"
    )
    assert page.title == "notes"
    assert page.sections == (Section((), "First line\nsame paragraph.\n\nSecond paragraph."),)


def test_zero_byte_file_is_refused():
    with pytest.raises(IngestError, match=r"the file is empty \(0 bytes\)"):
        extract_document(b"", file_name="empty.txt")


@pytest.mark.parametrize(("data", "name"), [(b"  \r\n\n\t ", "blank.txt"), (b"\n\n", "blank.md")])
def test_a_file_of_only_whitespace_has_no_text(data, name):
    with pytest.raises(IngestError, match="the file has no text"):
        extract_document(data, file_name=name)


def test_file_over_the_limit_is_refused_with_both_sizes(settings):
    settings.CAPTAIN = {**getattr(settings, "CAPTAIN", {}), "KNOWLEDGE_MAX_UPLOAD_BYTES": 20 * 1024 * 1024}
    with pytest.raises(IngestError, match="the file is 52 MB; the limit is 20 MB"):
        extract_document(b"a" * (52 * 1024 * 1024), file_name="big.txt")


def test_binary_garbage_named_txt_is_refused():
    with pytest.raises(IngestError, match="binary"):
        extract_document(os.urandom(4096), file_name="notes.txt")
    # Without NUL bytes the control characters give it away.
    garbage = bytes(b for b in os.urandom(8192) if b != 0)
    with pytest.raises(IngestError, match=r"not text|binary"):
        extract_document(garbage, file_name="notes.txt")


def test_unsupported_types_are_named():
    with pytest.raises(IngestError, match=r"unsupported file type \(application/vnd.ms-excel\)"):
        extract_document(b"x,y", file_name="sheet.xls", content_type="application/vnd.ms-excel")
    with pytest.raises(IngestError, match=r"unsupported file type \(\.docx\)"):
        extract_document(b"PK\x03\x04", file_name="letter.docx")


def test_a_100_page_pdf_is_extracted_page_by_page_and_chunked():
    from captain.knowledge.ingest.chunking import chunk_page
    from tests.captain.knowledge.pdf_files import manual_pages

    progress: list[tuple[int, int]] = []
    page = extract_document(
        pdf_with_pages(manual_pages(100)),
        file_name="manual.pdf",
        on_progress=lambda d, t: progress.append((d, t)),
    )
    assert progress == [(done, 100) for done in range(1, 101)]
    assert len(page.sections) == 100
    assert "Chapter 100: maintenance" in page.sections[-1].text
    chunks = chunk_page(page)
    assert all(0 < len(chunk.text) <= 1000 for chunk in chunks)
    assert (
        sum(chunk.text.count("Step ") for chunk in chunks) == 100 * 16
    )  # every step sentence, none cut in half


def test_html_inline_markup_joins_words_and_nested_lists_are_not_repeated():
    html = (
        b"<html><body><article><h1>Reset</h1><p>Follow these <b>important</b> steps to re<b>set</b> it.<br>Then wait."
        b"</p><ul><li>Hold the power button<ul><li>for ten seconds</li></ul></li><li>Release it</li></ul>"
        b"</article></body></html>"
    )
    page = extract_document(html, file_name="reset.html")
    assert page.sections == (
        Section(
            ("Reset",),
            "Follow these important steps to reset it. Then wait.\n\n"
            "- Hold the power button for ten seconds\n- Release it",
        ),
    )
