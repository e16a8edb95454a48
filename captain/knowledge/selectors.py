"""Reads of FAQ pairs and documents; `access_*` fetch and authorize in one call."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404

from captain.assistants.models import Assistant
from captain.knowledge.models import FaqEntry, KnowledgeChunk, KnowledgeDocument


def faq_entry_list(*, assistant: Assistant) -> QuerySet[FaqEntry]:
    return FaqEntry.objects.filter(assistant=assistant, account_id=assistant.account_id).order_by("id")


def access_faq_entry(*, assistant: Assistant, faq_entry_id: int) -> FaqEntry:
    entry = faq_entry_list(assistant=assistant).filter(pk=faq_entry_id).first()
    if entry is None:
        raise Http404("No such FAQ entry.")
    return entry


def document_list(*, assistant: Assistant) -> QuerySet[KnowledgeDocument]:
    """An assistant's knowledge documents, newest first, without their stored upload bytes."""
    return (
        KnowledgeDocument.objects.filter(assistant=assistant, account_id=assistant.account_id)
        .defer("upload")
        .order_by("-id")
    )


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
