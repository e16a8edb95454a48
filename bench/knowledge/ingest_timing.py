"""How long a 100-page PDF takes to be ready: extract and chunk (median of three runs), then embed its chunks'
views with the bundled encoder (once, the encoder loaded beforehand, as in a worker).

The PDF is made here with fpdf2 (a dev dependency): 100 pages of manual text, about 2,300 characters a page.
Prints the seconds for extraction (pypdf, per page) and chunking, median of three runs.

    .venv/bin/python -m bench.knowledge.ingest_timing [pages]
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import django


def manual_pdf(pages: int) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_auto_page_break(auto=False)
    pdf.set_title("Northwind S2 service manual")
    for number in range(1, pages + 1):
        pdf.add_page()
        pdf.set_font("Helvetica", size=10)
        steps = " ".join(
            f"Step {number}.{step}: check the brake cable and tighten the nut by a quarter turn if the lever "
            f"travels more than {step + 10} mm."
            for step in range(1, 10)
        )
        pdf.multi_cell(0, 5, f"Chapter {number}: maintenance\n\n{steps}\n\n{steps}")
    return bytes(pdf.output())


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from captain.knowledge.ingest.chunking import chunk_page
    from captain.knowledge.ingest.extract import extract_document

    pages = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    data = manual_pdf(pages)
    extract_times, chunk_times = [], []
    for _ in range(3):
        started = time.perf_counter()
        page = extract_document(data, file_name="manual.pdf")
        extracted = time.perf_counter()
        chunks = chunk_page(page)
        extract_times.append(extracted - started)
        chunk_times.append(time.perf_counter() - extracted)
    chars = page.text_chars
    extract_s, chunk_s = statistics.median(extract_times), statistics.median(chunk_times)
    print(f"{pages}-page PDF, {len(data) / 1024:.0f} KB, {chars} characters of text -> {len(chunks)} chunks")
    print(f"extract {extract_s:.2f} s ({extract_s / pages * 1000:.1f} ms/page), chunk {chunk_s:.3f} s, "
          f"total {extract_s + chunk_s:.2f} s (median of 3)")  # fmt: skip
    from captain.knowledge.services.retrieval import get_encoder
    from captain.knowledge.services.retrieval.passages import embed_passages, passage_text

    get_encoder().encode("load the weights")
    started = time.perf_counter()
    vectors = embed_passages([passage_text(c.heading, c.text) for c in chunks])
    embed_s = time.perf_counter() - started
    views = sum(len(v) for v in vectors) // (512 * 4)
    print(f"embed {embed_s:.2f} s ({views} views); ready in about {extract_s + chunk_s + embed_s:.1f} s")


if __name__ == "__main__":
    main()
