"""Knowledge rows for tests: documents with chunks embedded by the real encoder (as processing stores them), and
the customer side of a knowledge run: a question waiting for its reply, and the replies it got."""

from __future__ import annotations

from captain.answering.models import ReplyJob
from captain.assistants.models import Assistant
from captain.knowledge.models import KnowledgeChunk, KnowledgeDocument
from captain.knowledge.services.retrieval.passages import embed_passages, passage_text, search_tokens
from helpdesk.models import Message
from tests.factories import ConversationFactory, MessageFactory


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


def ask(link, content: str) -> Message:
    """A new conversation in `link`'s inbox whose customer message waits for the AI's reply."""
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox)
    return MessageFactory(conversation=conversation, content=content, reply_job=ReplyJob.Status.PENDING)


def replies(message: Message) -> list[str]:
    """What the customer was sent in `message`'s conversation, oldest first."""
    return list(
        message.conversation.messages.filter(message_type=Message.Type.OUTGOING, private=False)
        .order_by("id")
        .values_list("content", flat=True)
    )
