"""Writes of an assistant's FAQ entries (what knowledge retrieval and the `faq_lookup` tool search).

`FaqEntryFields` is the one list of editable FAQ fields (API serializers and admin forms use `FAQ_ENTRY_FIELDS`).
`status` is deliberately not in it: an entry moves between pending, approved and rejected only through the
review functions below, so no form or serializer can approve a draft by writing a field, and every approval
records when it happened (`reviewed_at`).

Entries typed by people (admin, API, demo seed) are approved when saved; drafts the model writes
(captain.knowledge.services.faq_drafts) are saved pending through `faq_draft_create`. Editing an entry never changes its
status: an approved entry stays approved, a pending draft stays pending until someone approves it.
An entry belongs to its assistant's account: the account is copied here, never taken from the caller.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypedDict, Unpack

from django.core.exceptions import ValidationError
from django.utils import timezone

from captain.assistants.models import Assistant
from captain.knowledge.models import FaqEntry, KnowledgeDocument
from helpdesk.models import Conversation

ReviewAction = Literal["approve", "reject"]
REVIEW_ACTIONS: dict[str, str] = {"approve": FaqEntry.Status.APPROVED, "reject": FaqEntry.Status.REJECTED}


class FaqEntryFields(TypedDict, total=False):
    question: str
    answer: str
    enabled: bool
    """Disabled entries stay stored but are never retrieved."""


FAQ_ENTRY_FIELDS: tuple[str, ...] = tuple(FaqEntryFields.__annotations__)


def _only_faq_fields(fields: Mapping[str, Any]) -> None:
    unknown = sorted(set(fields) - set(FAQ_ENTRY_FIELDS))
    if unknown:
        raise TypeError(f"Not an FAQ entry field: {', '.join(unknown)}")


def faq_entry_create(*, assistant: Assistant, **fields: Unpack[FaqEntryFields]) -> FaqEntry:
    """An entry written by a person: approved (and reviewed) as it is saved."""
    _only_faq_fields(fields)
    return FaqEntry.objects.create(
        assistant=assistant,
        account_id=assistant.account_id,
        status=FaqEntry.Status.APPROVED,
        source=FaqEntry.Source.MANUAL,
        reviewed_at=timezone.now(),
        **fields,
    )


def faq_draft_create(
    *,
    assistant: Assistant,
    question: str,
    answer: str,
    source_document: KnowledgeDocument | None = None,
    source_conversation: Conversation | None = None,
) -> FaqEntry:
    """A pair the model drafted: pending until someone approves it. Exactly one source is given, of the
    assistant's own account (checked here too, so a caller's mix-up cannot link another tenant's row)."""
    source = source_document or source_conversation
    if source is None or (source_document is not None and source_conversation is not None):
        raise ValueError("A draft has exactly one source: a document or a conversation.")
    source_account = source.account_id
    if source_account != assistant.account_id:
        raise ValueError("The draft's source belongs to another account.")
    return FaqEntry.objects.create(
        assistant=assistant,
        account_id=assistant.account_id,
        question=question,
        answer=answer,
        status=FaqEntry.Status.PENDING,
        source=FaqEntry.Source.DOCUMENT if source_document else FaqEntry.Source.CONVERSATION,
        source_document=source_document,
        source_conversation=source_conversation,
    )


def faq_entry_update(*, entry: FaqEntry, **fields: Unpack[FaqEntryFields]) -> FaqEntry:
    """Write the given fields; the others keep their value, the status included."""
    _only_faq_fields(fields)
    for name, value in fields.items():
        setattr(entry, name, value)
    if fields:
        # updated_at: retrieval notices an edited entry by it (its index version), so it is always written.
        entry.save(update_fields=[*fields, "updated_at"])
    return entry


def faq_entry_delete(*, entry: FaqEntry) -> None:
    entry.delete()


def _edited(value: str | None, current: str, name: str, limit: int) -> str:
    if value is None:
        return current
    value = value.strip()
    if not value:
        raise ValidationError({name: [f"The {name} cannot be empty."]})
    if len(value) > limit:
        raise ValidationError({name: [f"The {name} is longer than {limit} characters."]})
    return value


def faq_entry_approve(*, entry: FaqEntry, question: str | None = None, answer: str | None = None) -> FaqEntry:
    """Approve the entry, with the reviewer's edits of its question and answer when given (one step, so an
    edited draft is never live with the model's wording). Raises ValidationError for an empty edit."""
    entry.question = _edited(question, entry.question, "question", 2000)
    entry.answer = _edited(answer, entry.answer, "answer", 10_000)
    entry.status = FaqEntry.Status.APPROVED
    entry.reviewed_at = timezone.now()
    entry.save(update_fields=["question", "answer", "status", "reviewed_at", "updated_at"])
    return entry


def faq_entry_reject(*, entry: FaqEntry) -> FaqEntry:
    """Reject the entry: kept (so the same draft is not proposed again) but never retrieved."""
    entry.status = FaqEntry.Status.REJECTED
    entry.reviewed_at = timezone.now()
    entry.save(update_fields=["status", "reviewed_at", "updated_at"])
    return entry


def faq_entries_review(*, assistant: Assistant, ids: Iterable[int], action: str) -> int:
    """Approve or reject many entries of `assistant` at once; returns how many changed status. Ids of other
    assistants or accounts are ignored (they match no row of this assistant). Raises ValueError for an action
    other than "approve" or "reject"."""
    status = REVIEW_ACTIONS.get(action)
    if status is None:
        raise ValueError(f"Unknown review action {action!r}: use one of {', '.join(REVIEW_ACTIONS)}.")
    now = timezone.now()
    # update() skips auto_now, and retrieval's index version reads updated_at: set both explicitly.
    return (
        FaqEntry.objects.filter(assistant=assistant, account_id=assistant.account_id, pk__in=list(ids))
        .exclude(status=status)
        .update(status=status, reviewed_at=now, updated_at=now)
    )
