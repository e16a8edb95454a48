"""FAQ drafts: the assistant's own model writes question/answer pairs from a document's chunks or from a resolved
conversation in which a person answered the customer; they are stored *pending* until an administrator approves
them (captain.knowledge.services.faq), and only approved entries are ever retrieved.

Drafting is an administrator-side job: it costs the account no credits (no hold, no ledger row), whatever model
the assistant uses. It calls only the endpoint and model the assistant answers with (`team_model_for`), which
resolves among the operator's endpoints and the account's own, so an account's drafts never go to an endpoint it
may not use. Every pair is checked before it is saved: its answer's numbers, prices, e-mail addresses and links
must occur in the text it was drafted from, and a pair repeating one of the assistant's entries (or a pair drafted
earlier in the same run) is skipped. A model failure (timeout, HTTP error, unusable answer) is logged and stores
nothing: the pairs of a document are saved together at the end, in one transaction.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import timedelta
from functools import cache

import redis
from django.conf import settings
from django.db import transaction
from django.db.models import Exists, Max, OuterRef
from django.utils import timezone

from captain.assistants.models import Assistant, AssistantInbox
from captain.assistants.services.drafting import DraftingModel
from captain.assistants.services.model_endpoints import EndpointUnavailable
from captain.conf import captain_setting
from captain.knowledge.models import FaqEntry, KnowledgeChunk, KnowledgeDocument
from captain.knowledge.services.faq import faq_draft_create
from captain.knowledge.services.faq_draft_pairs import (
    DUPLICATE_SIMILARITY,
    Deduplicator,
    Pair,
    evidence_of,
    is_supported,
    parse_pairs,
)
from captain.queue import task
from captain.runtime.model import ModelError
from helpdesk.models import Conversation, Message

logger = logging.getLogger(__name__)

CHUNK_CHARS = 2500
"""Of each chunk's text put in a prompt (chunks are usually shorter), so a call's prompt stays bounded."""
TRANSCRIPT_MESSAGES = 20
TRANSCRIPT_MESSAGE_CHARS = 1500
CONVERSATION_MARK_DAYS = 180
"""How long the marker "this conversation was drafted from" lives in Redis; the conversation sweep only looks
back FAQ_DRAFTS_CONVERSATION_LOOKBACK_HOURS, so this only needs to outlast that (with room for reopen/resolve)."""

DOCUMENT_PROMPT = (
    "You write FAQ entries for a customer support team. From the passages below, write up to {n} questions a "
    "customer could ask, each with a short answer taken only from the passages: copy numbers, prices, e-mail "
    "addresses and links exactly as written; never add a fact that is not in the passages. Write each question "
    "and answer in the language of the passage. Reply with only a JSON array: "
    '[{{"question": "...", "answer": "..."}}]. Reply [] if the passages hold nothing a customer would ask.'
)
CONVERSATION_PROMPT = (
    "You write FAQ entries for a customer support team. Below is a resolved support conversation in which a "
    "support agent answered the customer. Write ONE general question (no names, order numbers or other "
    "personal details) and its answer, taken only from what the support agent wrote. Use the customer's "
    'language. Reply with only JSON: [{"question": "...", "answer": "..."}]. Reply [] if the agent did not '
    "answer a question that other customers could ask."
)


@dataclass
class DraftReport:
    """What one drafting job did (logged; the count of stored drafts is what callers get)."""

    calls: int = 0
    stored: int = 0
    unparsed: int = 0
    """Model answers from which no pair could be read."""
    unsupported: int = 0
    """Pairs dropped because a number, e-mail or link of the answer is not in the source text."""
    duplicates: int = 0
    skipped_chunks: int = 0
    """Chunks beyond FAQ_DRAFTS_MAX_CALLS_PER_DOCUMENT calls, not drafted from."""


def _drafter(assistant: Assistant) -> DraftingModel:
    """The assistant's model, asked with the settings FAQ drafting uses (raises EndpointUnavailable)."""
    return DraftingModel(assistant, temperature=0.2, max_tokens=int(captain_setting("FAQ_DRAFTS_MAX_TOKENS")))


def _deduplicator(assistant: Assistant) -> Deduplicator:
    # Every entry of the assistant counts, rejected ones too: a re-synced document would otherwise propose the
    # drafts an administrator already rejected again and again. A person can still type such an entry by hand.
    known = FaqEntry.objects.filter(assistant=assistant, account_id=assistant.account_id).values_list(
        "question", "answer"
    )
    threshold = captain_setting("FAQ_DRAFTS_DUPLICATE_SIMILARITY") or DUPLICATE_SIMILARITY
    return Deduplicator((f"{q}\n{a}" for q, a in known.iterator()), threshold=float(threshold))


def _keep(pairs: list[Pair], source_texts: list[str], dedup: Deduplicator, report: DraftReport) -> list[Pair]:
    evidence = evidence_of(source_texts)
    kept = []
    for pair in pairs:
        if not is_supported(pair, evidence):
            report.unsupported += 1
        elif not dedup.keep(pair):
            report.duplicates += 1
        else:
            kept.append(pair)
    return kept


def _deadline() -> float:
    """When to stop starting model calls: the run deadline the Celery soft limit is built on, less one call's
    worst case (timeout x attempts), so a job of many calls ends inside the task's time limit."""
    one_call = float(captain_setting("LLM_TIMEOUT_SECONDS")) * (int(captain_setting("LLM_MAX_RETRIES")) + 1)
    return time.monotonic() + max(0.0, float(captain_setting("RUN_DEADLINE_SECONDS")) - one_call)


# ---- documents ----------------------------------------------------------------------------------------------


def _chunk_groups(document: KnowledgeDocument, report: DraftReport) -> list[list[str]]:
    per_call = max(1, int(captain_setting("FAQ_DRAFTS_CHUNKS_PER_CALL")))
    max_calls = max(0, int(captain_setting("FAQ_DRAFTS_MAX_CALLS_PER_DOCUMENT")))
    rows = KnowledgeChunk.objects.filter(
        document=document, assistant_id=document.assistant_id, account_id=document.account_id
    ).values_list("heading", "text")
    texts = [f"{heading}\n{text[:CHUNK_CHARS]}" if heading else text[:CHUNK_CHARS] for heading, text in rows]
    groups = [texts[i : i + per_call] for i in range(0, len(texts), per_call)]
    report.skipped_chunks = sum(len(g) for g in groups[max_calls:])
    return groups[:max_calls]


def faq_drafts_from_document(*, document_id: int) -> int:
    """Draft FAQ pairs from a READY document's chunks, a few chunks per model call and at most
    FAQ_DRAFTS_MAX_CALLS_PER_DOCUMENT calls; store the supported, new ones as pending drafts of the document's
    assistant. Returns how many were stored (0 when the document is not ready, the model is unavailable or
    failed: nothing is stored then). Costs no credits."""
    document = KnowledgeDocument.objects.select_related("assistant").filter(pk=document_id).first()
    if document is None or document.status != KnowledgeDocument.Status.READY:
        logger.info("faq drafts: document %s is missing or not ready; nothing drafted", document_id)
        return 0
    assistant = document.assistant
    report = DraftReport()
    try:
        drafter = _drafter(assistant)
        dedup = _deduplicator(assistant)
        pairs: list[Pair] = []
        per_call = int(captain_setting("FAQ_DRAFTS_PAIRS_PER_CHUNK"))
        groups = _chunk_groups(document, report)
        deadline = _deadline()
        for done, group in enumerate(groups):
            if time.monotonic() >= deadline:
                # Stop before the task's time limit would: what was drafted is kept, the rest is counted.
                report.skipped_chunks += sum(len(g) for g in groups[done:])
                break
            passages = "\n\n".join(f"[Passage {i}]\n{text}" for i, text in enumerate(group, 1))
            system = DOCUMENT_PROMPT.format(n=per_call * len(group))
            content = drafter.ask(system, f"Document: {document.title or document.file_name}\n\n{passages}")
            report.calls += 1
            parsed = parse_pairs(content)
            if not parsed:
                report.unparsed += 1
            # Checked against this call's passages only: a fact must come from the text the model was shown.
            pairs += _keep(parsed, group, dedup, report)
    except EndpointUnavailable as exc:
        logger.warning("faq drafts: document %s: model unavailable: %s", document_id, exc)
        return 0
    except ModelError as exc:
        logger.warning(
            "faq drafts: document %s: model call %s failed, nothing stored: %s",
            document_id,
            report.calls + 1,
            exc,
        )
        return 0
    with transaction.atomic():
        # The document may have been deleted while the model was writing; its drafts would have no source.
        if not KnowledgeDocument.objects.filter(pk=document.pk).exists():
            return 0
        for pair in pairs:
            faq_draft_create(
                assistant=assistant, question=pair.question, answer=pair.answer, source_document=document
            )
    report.stored = len(pairs)
    logger.info("faq drafts: document %s: %s", document_id, report)
    return report.stored


def faq_drafts_document_enqueue(*, document_id: int) -> None:
    """Queue drafting for a document once the current transaction commits (the documents pipeline calls this
    when a document becomes READY; the API's "draft FAQs" button too)."""
    draft = task("captain.tasks.faq_drafts_from_document")
    transaction.on_commit(lambda: draft.delay(document_id))


# ---- conversations ------------------------------------------------------------------------------------------


@cache
def _redis() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=5)


def _mark_key(conversation_id: int) -> str:
    return f"captain:faq-drafts:conversation:{conversation_id}"


def _human_answered() -> Exists:
    return Exists(
        Message.objects.filter(
            conversation=OuterRef("pk"),
            sender_type=Message.SenderType.USER,
            message_type=Message.Type.OUTGOING,
            private=False,
        )
    )


def _transcript(conversation: Conversation) -> tuple[str, list[str]]:
    """The customer's and the people's public messages (newest TRANSCRIPT_MESSAGES), and the people's texts."""
    rows = list(
        Message.objects.filter(
            conversation=conversation,
            account_id=conversation.account_id,
            private=False,
            sender_type__in=[Message.SenderType.CONTACT, Message.SenderType.USER],
            message_type__in=[Message.Type.INCOMING, Message.Type.OUTGOING],
        )
        .exclude(content="")
        .order_by("-created_at", "-id")[:TRANSCRIPT_MESSAGES]
    )[::-1]
    lines, human = [], []
    for message in rows:
        text = message.content[:TRANSCRIPT_MESSAGE_CHARS]
        if message.sender_type == Message.SenderType.USER:
            human.append(text)
            lines.append(f"Support agent: {text}")
        else:
            lines.append(f"Customer: {text}")
    return "\n".join(lines), human


def _assistant_for(conversation: Conversation) -> Assistant | None:
    link = (
        AssistantInbox.objects.select_related("assistant")
        .filter(inbox_id=conversation.inbox_id, assistant__account_id=conversation.account_id)
        .first()
    )
    return link.assistant if link else None


def faq_drafts_from_conversation(*, conversation_id: int) -> int:
    """Draft one FAQ pair from a RESOLVED conversation in which a person (a support agent: not the AI, not a
    system message) answered the customer; stored pending with the conversation as its source. Never drafts
    twice from one conversation: skipped when a draft from it exists or another job claimed it (a Redis
    marker, kept also when the model found nothing to draft, so the sweep does not ask again). Returns how
    many drafts were stored (0 or 1). Costs no credits."""
    conversation = Conversation.objects.filter(pk=conversation_id).first()
    if conversation is None or conversation.status != Conversation.Status.RESOLVED:
        return 0
    assistant = _assistant_for(conversation)
    if assistant is None or FaqEntry.objects.filter(source_conversation=conversation).exists():
        return 0
    key = _mark_key(conversation.pk)
    if not _redis().set(key, "drafting", nx=True, ex=3600):
        logger.info("faq drafts: conversation %s already drafted or being drafted", conversation_id)
        return 0
    transcript, human = _transcript(conversation)
    if not human or "Customer:" not in transcript:
        # The AI (or nobody) answered: nothing a person taught; marked so the sweep does not look again.
        _redis().set(key, "nothing", ex=CONVERSATION_MARK_DAYS * 86400)
        return 0
    report = DraftReport()
    try:
        drafter = _drafter(assistant)
        content = drafter.ask(CONVERSATION_PROMPT, transcript)
        report.calls = 1
        parsed = parse_pairs(content)[:1]
        report.unparsed = 0 if parsed else 1
        # The answer's specifics must come from what the person wrote, not from the customer's message.
        kept = _keep(parsed, human, _deduplicator(assistant), report)
    except (EndpointUnavailable, ModelError) as exc:
        _redis().delete(key)  # a failure is not a draft: a later sweep or button may try again
        logger.warning("faq drafts: conversation %s: model failed, nothing stored: %s", conversation_id, exc)
        return 0
    with transaction.atomic():
        for pair in kept:
            faq_draft_create(
                assistant=assistant,
                question=pair.question,
                answer=pair.answer,
                source_conversation=conversation,
            )
    _redis().set(key, "done", ex=CONVERSATION_MARK_DAYS * 86400)
    report.stored = len(kept)
    logger.info("faq drafts: conversation %s: %s", conversation_id, report)
    return report.stored


def faq_draft_conversation_problem(*, conversation: Conversation) -> str | None:
    """Why drafting from this conversation would store nothing (a sentence for people), or None. The API and
    the dashboard ask before queueing, so a button answers with the reason instead of silently doing nothing."""
    if conversation.status != Conversation.Status.RESOLVED:
        return "Only resolved conversations are drafted from."
    if _assistant_for(conversation) is None:
        return "No assistant serves this conversation's inbox."
    if FaqEntry.objects.filter(source_conversation=conversation).exists():
        return "An FAQ draft was already written from this conversation."
    if not Conversation.objects.filter(pk=conversation.pk).filter(_human_answered()).exists():
        return "No person answered the customer in this conversation (AI replies are not drafted from)."
    return None


def faq_drafts_conversation_enqueue(*, conversation_id: int) -> None:
    """Queue drafting from one conversation after commit (the dashboard's and the API's button)."""
    draft = task("captain.tasks.faq_drafts_from_conversation")
    transaction.on_commit(lambda: draft.delay(conversation_id))


def faq_draft_conversation_candidates(*, limit: int) -> list[int]:
    """Resolved conversations with a person's public reply, active within the lookback window, on an inbox an
    assistant serves, with no draft yet and not marked as drafted: oldest first, at most `limit`.

    A lookback window plus the per-conversation marker stands in for a "last sweep" cursor: a sweep that did
    not run (beat down) loses nothing within the window, and two sweeps at once find the same rows but the
    marker lets only one job draft each."""
    since = timezone.now() - timedelta(hours=float(captain_setting("FAQ_DRAFTS_CONVERSATION_LOOKBACK_HOURS")))
    served = AssistantInbox.objects.filter(
        inbox_id=OuterRef("inbox_id"), assistant__account_id=OuterRef("account_id")
    )
    drafted = FaqEntry.objects.filter(source_conversation=OuterRef("pk"))
    rows = (
        Conversation.objects.filter(status=Conversation.Status.RESOLVED)
        .annotate(last_message_at=Max("messages__created_at"))
        .filter(last_message_at__gte=since)
        .filter(_human_answered(), Exists(served))
        .exclude(Exists(drafted))
        .order_by("last_message_at", "id")
        .values_list("id", flat=True)[: limit * 4]
    )
    ids = list(rows)
    if not ids:
        return []
    marked = _redis().mget([_mark_key(i) for i in ids])
    return [i for i, mark in zip(ids, marked, strict=True) if mark is None][:limit]


def faq_drafts_conversations_sweep() -> int:
    """The periodic job: queue drafting for up to FAQ_DRAFTS_CONVERSATION_BATCH new candidates; returns how
    many were queued."""
    draft = task("captain.tasks.faq_drafts_from_conversation")
    ids = faq_draft_conversation_candidates(limit=int(captain_setting("FAQ_DRAFTS_CONVERSATION_BATCH")))
    for conversation_id in ids:
        draft.delay(conversation_id)
    return len(ids)
