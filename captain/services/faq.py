"""Writes of an assistant's FAQ entries (what the `faq_lookup` tool searches).

`FaqEntryFields` is the one list of editable FAQ fields (API serializers and admin forms use `FAQ_ENTRY_FIELDS`).
An entry belongs to its assistant's account: the account is copied here, never taken from the caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict, Unpack

from ..models import Assistant, FaqEntry


class FaqEntryFields(TypedDict, total=False):
    question: str
    answer: str
    enabled: bool
    """Disabled entries stay stored but are never found by `faq_lookup`."""


FAQ_ENTRY_FIELDS: tuple[str, ...] = tuple(FaqEntryFields.__annotations__)


def _only_faq_fields(fields: Mapping[str, Any]) -> None:
    unknown = sorted(set(fields) - set(FAQ_ENTRY_FIELDS))
    if unknown:
        raise TypeError(f"Not an FAQ entry field: {', '.join(unknown)}")


def faq_entry_create(*, assistant: Assistant, **fields: Unpack[FaqEntryFields]) -> FaqEntry:
    _only_faq_fields(fields)
    return FaqEntry.objects.create(assistant=assistant, account_id=assistant.account_id, **fields)


def faq_entry_update(*, entry: FaqEntry, **fields: Unpack[FaqEntryFields]) -> FaqEntry:
    """Write the given fields; the others keep their value."""
    _only_faq_fields(fields)
    for name, value in fields.items():
        setattr(entry, name, value)
    if fields:
        entry.save(update_fields=list(fields))
    return entry


def faq_entry_delete(*, entry: FaqEntry) -> None:
    entry.delete()
