"""Knowledge rows for tests: documents with chunks embedded by the real encoder (as processing stores them)."""

from __future__ import annotations

from captain.assistants.models import Assistant
from captain.knowledge.models import KnowledgeChunk, KnowledgeDocument
from captain.knowledge.services.retrieval.passages import embed_passages, passage_text, search_tokens


def document(
    assistant: Assistant, title: str, chunks: list[tuple[str, str]], *, url: str = ""
) -> KnowledgeDocument:
    """A ready document whose chunks are (heading, text) pairs."""
    doc = KnowledgeDocument.objects.create(
        account_id=assistant.account_id,
        assistant=assistant,
        kind=KnowledgeDocument.Kind.URL if url else KnowledgeDocument.Kind.UPLOAD,
        title=title,
        source_url=url,
        status=KnowledgeDocument.Status.READY,
        chunk_count=len(chunks),
    )
    texts = [passage_text(heading, text) for heading, text in chunks]
    for ordinal, ((heading, text), vector) in enumerate(zip(chunks, embed_passages(texts), strict=True)):
        KnowledgeChunk.objects.create(
            account_id=assistant.account_id,
            assistant=assistant,
            document=doc,
            ordinal=ordinal,
            heading=heading,
            text=text,
            url=url,
            search_text=search_tokens(passage_text(heading, text)),
            embedding=vector,
        )
    return doc
