"""Celery tasks of knowledge: document processing and re-sync, FAQ drafts."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="captain.tasks.knowledge_document_process", acks_late=True)
def knowledge_document_process(document_id: int) -> str:
    """Extract, chunk and embed one knowledge document (captain.knowledge.services.knowledge). Not rejected on a lost
    worker: a file that kills the worker would otherwise come back for ever (re-sync it by hand)."""
    from captain.knowledge.services.knowledge import document_process

    return document_process(document_id=document_id)


@shared_task(name="captain.tasks.knowledge_resync_due", acks_late=True)
def knowledge_resync_due() -> int:
    """Queue the knowledge documents whose re-sync interval elapsed (beat, hourly)."""
    from captain.knowledge.services.knowledge import documents_resync_due

    return documents_resync_due()


@shared_task(name="captain.tasks.faq_drafts_from_document", acks_late=True, reject_on_worker_lost=True)
def faq_drafts_from_document(document_id: int) -> int:
    """Draft pending FAQ entries from a ready document (captain.knowledge.services.faq_drafts); no credits charged."""
    from captain.knowledge.services.faq_drafts import faq_drafts_from_document as draft

    return draft(document_id=document_id)


@shared_task(name="captain.tasks.faq_drafts_from_conversation", acks_late=True, reject_on_worker_lost=True)
def faq_drafts_from_conversation(conversation_id: int) -> int:
    """Draft a pending FAQ entry from a resolved conversation a person answered; no credits charged."""
    from captain.knowledge.services.faq_drafts import faq_drafts_from_conversation as draft

    return draft(conversation_id=conversation_id)


@shared_task(name="captain.tasks.faq_drafts_conversations_sweep", acks_late=True)
def faq_drafts_conversations_sweep() -> int:
    """Periodic (beat): queue drafting for conversations resolved lately with a person's answer."""
    from captain.knowledge.services.faq_drafts import faq_drafts_conversations_sweep as sweep

    return sweep()
