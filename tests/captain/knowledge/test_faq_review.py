"""captain.knowledge.services.faq review: people's entries are approved when saved, drafts move only through approve /
edit-and-approve / reject, one by one or in bulk, scoped to the assistant."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from captain.knowledge.models import FaqEntry
from captain.knowledge.services.faq import (
    FAQ_ENTRY_FIELDS,
    faq_draft_create,
    faq_entries_review,
    faq_entry_approve,
    faq_entry_create,
    faq_entry_reject,
    faq_entry_update,
)
from tests.captain.answering.knowledge_rows import document
from tests.factories import AssistantFactory, ConversationFactory, FaqEntryFactory

pytestmark = pytest.mark.django_db

PENDING, APPROVED, REJECTED = FaqEntry.Status.PENDING, FaqEntry.Status.APPROVED, FaqEntry.Status.REJECTED


def draft(assistant, question="How long is shipping?", answer="3 days."):
    return FaqEntryFactory(assistant=assistant, question=question, answer=answer, status=PENDING)


def test_status_is_not_an_editable_field():
    assert "status" not in FAQ_ENTRY_FIELDS
    with pytest.raises(TypeError, match="status"):
        faq_entry_update(entry=FaqEntryFactory(), status=REJECTED)  # type: ignore[call-arg]


def test_an_entry_a_person_writes_is_approved_and_manual():
    entry = faq_entry_create(assistant=AssistantFactory(), question="Q?", answer="A.")

    entry.refresh_from_db()
    assert (entry.status, entry.source) == (APPROVED, FaqEntry.Source.MANUAL)
    assert entry.reviewed_at is not None


def test_editing_keeps_the_status():
    approved = faq_entry_create(assistant=AssistantFactory(), question="Q?", answer="A.")
    pending = draft(approved.assistant)

    faq_entry_update(entry=approved, answer="New answer.")
    faq_entry_update(entry=pending, answer="Edited draft.")

    approved.refresh_from_db()
    pending.refresh_from_db()
    assert (approved.status, approved.answer) == (APPROVED, "New answer.")
    assert (pending.status, pending.answer) == (PENDING, "Edited draft.")


def test_a_draft_is_pending_with_its_source_of_the_same_account():
    assistant = AssistantFactory()
    doc = document(assistant, "Shipping", [("Times", "Parcels take 3 days.")])

    entry = faq_draft_create(assistant=assistant, question="How long?", answer="3 days.", source_document=doc)

    assert (entry.status, entry.source, entry.source_document_id) == (
        PENDING,
        FaqEntry.Source.DOCUMENT,
        doc.pk,
    )
    other_conversation = ConversationFactory()  # another account
    with pytest.raises(ValueError, match="another account"):
        faq_draft_create(
            assistant=assistant, question="Q?", answer="A.", source_conversation=other_conversation
        )
    assert FaqEntry.objects.count() == 1


def test_approve_as_written_and_edit_and_approve():
    assistant = AssistantFactory()
    first, second = draft(assistant), draft(assistant, "Refunds?", "5 days.")

    faq_entry_approve(entry=first)
    faq_entry_approve(entry=second, question="  How long do refunds take?  ", answer="Refunds take 5 days.")

    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.status, first.question, first.reviewed_at is not None) == (
        APPROVED,
        "How long is shipping?",
        True,
    )
    assert (second.status, second.question, second.answer) == (
        APPROVED,
        "How long do refunds take?",
        "Refunds take 5 days.",
    )


def test_an_empty_edit_is_refused_and_changes_nothing():
    entry = draft(AssistantFactory())

    with pytest.raises(ValidationError, match="answer cannot be empty"):
        faq_entry_approve(entry=entry, answer="   ")

    entry.refresh_from_db()
    assert (entry.status, entry.answer) == (PENDING, "3 days.")


def test_reject():
    entry = faq_entry_reject(entry=draft(AssistantFactory()))

    entry.refresh_from_db()
    assert (entry.status, entry.reviewed_at is not None) == (REJECTED, True)


def test_bulk_review_changes_only_this_assistants_entries_and_counts_them():
    assistant = AssistantFactory()
    mine = [draft(assistant, f"Question {i}?") for i in range(3)]
    sibling = draft(AssistantFactory(account=assistant.account))
    foreign = draft(AssistantFactory())  # another account
    before = {e.pk: e.updated_at for e in mine}

    changed = faq_entries_review(
        assistant=assistant, ids=[mine[0].pk, mine[1].pk, sibling.pk, foreign.pk, 999_999], action="approve"
    )

    assert changed == 2
    statuses = dict(FaqEntry.objects.values_list("pk", "status"))
    assert [statuses[e.pk] for e in mine] == [APPROVED, APPROVED, PENDING]
    assert (statuses[sibling.pk], statuses[foreign.pk]) == (PENDING, PENDING)
    # updated_at moves with a bulk update too: retrieval's index notices the change by it.
    assert FaqEntry.objects.get(pk=mine[0].pk).updated_at > before[mine[0].pk]
    # Already approved: not counted again.
    assert faq_entries_review(assistant=assistant, ids=[mine[0].pk, mine[2].pk], action="approve") == 1
    assert faq_entries_review(assistant=assistant, ids=[e.pk for e in mine], action="reject") == 3


def test_bulk_review_refuses_an_unknown_action():
    entry = draft(AssistantFactory())

    with pytest.raises(ValueError, match="Unknown review action 'delete'"):
        faq_entries_review(assistant=entry.assistant, ids=[entry.pk], action="delete")
    entry.refresh_from_db()
    assert entry.status == PENDING
