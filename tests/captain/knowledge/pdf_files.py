"""Real PDF files for the tests and the timing bench: fpdf2 lays out the text, pypdf encrypts."""

from __future__ import annotations

import io

import pypdf
from fpdf import FPDF


def pdf_with_pages(pages: list[str], *, title: str = "") -> bytes:
    pdf = FPDF()
    pdf.set_auto_page_break(auto=False)
    if title:
        pdf.set_title(title)
    for text in pages:
        pdf.add_page()
        pdf.set_font("Helvetica", size=11)
        pdf.multi_cell(0, 6, text)
    return bytes(pdf.output())


def blank_pdf(pages: int = 1) -> bytes:
    """A PDF with a drawing and no text at all: what a scan without OCR looks like to a text extractor."""
    pdf = FPDF()
    for _ in range(pages):
        pdf.add_page()
        pdf.rect(20, 20, 100, 60)
    return bytes(pdf.output())


def encrypted(data: bytes, *, user_password: str, owner_password: str = "owner") -> bytes:
    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=user_password, owner_password=owner_password, algorithm="AES-256")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def manual_pages(count: int) -> list[str]:
    """`count` pages of a product manual: a heading line and a few paragraphs of sentences each."""
    pages = []
    for number in range(1, count + 1):
        sentences = " ".join(
            f"Step {number}.{step}: check the scooter's brake cable and tighten the nut by a quarter turn if the "
            f"lever travels more than {step + 10} mm."
            for step in range(1, 9)
        )
        pages.append(f"Chapter {number}: maintenance\n\n{sentences}\n\n{sentences}")
    return pages
