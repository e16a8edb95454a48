"""Reads of FAQ pairs and documents; `access_*` fetch and authorize in one call."""

from __future__ import annotations

from django.db.models import Count, QuerySet
from django.http import Http404

from captain.assistants.models import Assistant
from captain.knowledge.models import FaqEntry, KnowledgeChunk, KnowledgeDocument


def faq_entry_list(*, assistant: Assistant) -> QuerySet[FaqEntry]:
    return FaqEntry.objects.filter(assistant=assistant, account_id=assistant.account_id).order_by("id")


def faq_entry_counts(*, assistant: Assistant) -> dict[str, int]:
    """Status -> how many of the assistant's FAQ entries have it (every status, 0 when none): one query."""
    counts = dict.fromkeys(FaqEntry.Status.values, 0)
    rows = (
        FaqEntry.objects.filter(assistant=assistant, account_id=assistant.account_id)
        .values_list("status")
        .annotate(n=Count("id"))
        .order_by()
    )
    counts.update({status: n for status, n in rows})
    return counts


def faq_entries_for_review(*, assistant: Assistant, status: str) -> QuerySet[FaqEntry]:
    """The assistant's FAQ entries of one status for the review page, newest first, with their source
    document."""
    return (
        faq_entry_list(assistant=assistant)
        .filter(status=status)
        .select_related("source_document")
        .order_by("-created_at", "-id")
    )


def access_faq_entry(*, assistant: Assistant, faq_entry_id: int) -> FaqEntry:
    entry = faq_entry_list(assistant=assistant).filter(pk=faq_entry_id).first()
    if entry is None:
        raise Http404("No such FAQ entry.")
    return entry


def document_list(*, assistant: Assistant, status: str | None = None) -> QuerySet[KnowledgeDocument]:
    """An assistant's knowledge documents (of one status when `status` is given), newest first, without their
    stored upload bytes."""
    documents = (
        KnowledgeDocument.objects.filter(assistant=assistant, account_id=assistant.account_id)
        .defer("upload")
        .order_by("-id")
    )
    return documents if status is None else documents.filter(status=status)


def access_document(*, assistant: Assistant, document_id: int) -> KnowledgeDocument:
    """A document of an assistant already obtained through `access_assistant`; 404 otherwise."""
    document = document_list(assistant=assistant).filter(pk=document_id).first()
    if document is None:
        raise Http404("No such document.")
    return document


def document_chunks(*, document: KnowledgeDocument) -> QuerySet[KnowledgeChunk]:
    """The passages of a document (from `access_document`) in order, without their vectors."""
    return (
        KnowledgeChunk.objects.filter(document=document, account_id=document.account_id)
        .defer("embedding", "search_text")
        .order_by("ordinal")
    )
