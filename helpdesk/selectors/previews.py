"""How a message of files alone reads in a one-line preview: the conversation lists and the contact panel's past
conversations both name its files, so the row does not look empty. Its own module because both selectors use it
(dashboard imports search, which imports contacts)."""

from __future__ import annotations


def files_preview(files: object) -> str:
    """A message's files as its list preview ("📎 invoice.pdf, 📎 photo.png"): by name, else by kind."""
    items = files if isinstance(files, list) else []  # the column is a list; anything else shows nothing
    names = [str(i.get("file_name") or i.get("type") or "file") for i in items if isinstance(i, dict)]
    return ", ".join(f"📎 {name}" for name in names)
