"""The one error ingestion raises."""

from __future__ import annotations


class IngestError(Exception):
    """A document that cannot be processed. str(exc) is a short reason shown to the admin as the document's failed
    status, e.g. "the PDF is encrypted", "the file is 52 MB; the limit is 20 MB", "the page redirects to a private
    address (10.0.0.1)", "the sitemap lists 100000 URLs; the limit is 1000"."""


def human_size(size: int) -> str:
    """A byte count the way an admin reads it ("52 MB", "1.5 MB", "800 bytes"): sizes in messages only."""
    if size >= 1024 * 1024:
        mb = size / (1024 * 1024)
        return f"{mb:.0f} MB" if mb >= 10 else f"{mb:.1f} MB".replace(".0 MB", " MB")
    if size >= 1024:
        return f"{size / 1024:.0f} KB"
    return f"{size} bytes"
