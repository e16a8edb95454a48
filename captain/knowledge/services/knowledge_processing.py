"""The body of the knowledge document task: extract or fetch -> chunk -> embed -> replace the chunks -> READY.

Rules it keeps:
- The old chunks stay searchable until the new ones are committed, in ONE transaction with the document row;
  a failed (re-)sync leaves them in place and says FAILED with the reason.
- `IngestError` (bad input: an empty or corrupt file, a refused URL, a page that never ends ...) fails the
  document with its message; any other exception fails it with "internal error (<type>)" and is logged, so no
  document stays "processing" for ever and no traceback text reaches a tenant.
- Idempotent under redelivery (`acks_late`): only a QUEUED or PROCESSING document is processed; one that is
  READY or FAILED, or was deleted meanwhile, is left as it is. A document re-queued while this run works (a
  re-sync) stops this run at its next progress save if the new task has not claimed it yet; if both run, each
  replaces the chunks whole under a row lock, so the last to commit wins and nothing is mixed.
- The same text again (same SHA-256 over the chunks) keeps the chunks and their vectors: only the status and
  `synced_at` change.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Sequence
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.db import transaction
from django.utils import timezone

from captain.conf import captain_setting
from captain.knowledge.ingest.chunking import chunk_page
from captain.knowledge.ingest.errors import IngestError
from captain.knowledge.ingest.extract import extract_document
from captain.knowledge.ingest.fetch import FetchLimits, crawl_site, fetch_page, fetch_sitemap
from captain.knowledge.models import KnowledgeChunk, KnowledgeDocument
from captain.knowledge.services.faq_drafts import faq_drafts_document_enqueue
from captain.knowledge.services.retrieval.passages import embed_passages, passage_text, search_tokens
from helpdesk.outbound import OutboundRefused

logger = logging.getLogger(__name__)

Status = KnowledgeDocument.Status
Kind = KnowledgeDocument.Kind

PROGRESS_SAVE_SECONDS = 0.5
EMBED_BATCH = 32
FETCHED_AT = 40
"""Percent done once the text is extracted or fetched; embedding takes the rest up to 99."""
HEADING_MAX = KnowledgeChunk._meta.get_field("heading").max_length or 500
URL_MAX = KnowledgeChunk._meta.get_field("url").max_length or 2000
TITLE_MAX = KnowledgeDocument._meta.get_field("title").max_length or 300
REASON_MAX = 1000


class _Gone(Exception):
    """The document was deleted or re-queued while this run worked on it: stop without writing."""


class _Progress:
    """Saves the percent done at most every PROGRESS_SAVE_SECONDS (a crawl reports after every page)."""

    def __init__(self, document_id: int) -> None:
        self.document_id = document_id
        self.saved = 0
        self.saved_at = 0.0
        self.total = 0
        """The last total the ingestion reported: a PDF's page count."""

    def set(self, percent: float) -> None:
        value = max(self.saved, min(99, int(percent)))
        now = time.monotonic()
        if value == self.saved or now - self.saved_at < PROGRESS_SAVE_SECONDS:
            return
        # updated_at too: it is the heartbeat by which a document stuck in PROCESSING is recognised.
        updated = KnowledgeDocument.objects.filter(pk=self.document_id, status=Status.PROCESSING).update(
            progress=value, updated_at=timezone.now()
        )
        if not updated:
            raise _Gone
        self.saved, self.saved_at = value, now

    def fetching(self, done: Any = None, total: Any = None, *_: Any) -> None:
        """The ingestion's `on_progress`: (done, total) or a fraction; maps onto 0..FETCHED_AT."""
        if isinstance(done, int | float) and isinstance(total, int | float) and total > 0:
            self.total = int(total)
            fraction = done / total
        elif isinstance(done, float) and total is None:
            fraction = done
        else:
            return
        self.set(FETCHED_AT * max(0.0, min(1.0, fraction)))


def _sentence(reason: str) -> str:
    """Ingestion reasons are lower-case phrases ("the PDF is encrypted"): shown alone, they read as a sentence."""
    reason = reason.strip()
    if not reason:
        return reason
    reason = reason[0].upper() + reason[1:]
    return reason if reason.endswith((".", "!", "?", ")")) else f"{reason}."


def _fail(document_id: int, reason: str) -> str:
    KnowledgeDocument.objects.filter(pk=document_id).update(
        status=Status.FAILED, status_reason=reason[:REASON_MAX], progress=0, updated_at=timezone.now()
    )
    return "failed"


def _pages(document: KnowledgeDocument, progress: _Progress) -> list[Any]:
    if document.kind == Kind.UPLOAD:
        if not document.upload:
            raise _MissingUpload
        return [
            extract_document(
                bytes(document.upload),
                file_name=document.file_name,
                content_type=document.content_type,
                on_progress=progress.fetching,
            )
        ]
    limits = FetchLimits(max_pages=document.max_pages, max_depth=document.max_depth)
    if document.kind == Kind.URL:
        return [fetch_page(document.source_url, limits=limits)]
    if document.kind == Kind.SITEMAP:
        return fetch_sitemap(document.source_url, limits=limits, on_progress=progress.fetching)
    return crawl_site(document.source_url, limits=limits, on_progress=progress.fetching)


class _MissingUpload(Exception):
    pass


def _chunk_rows(pages: Sequence[Any]) -> list[tuple[str, str, str]]:
    """(heading, text, url) of every chunk of every page, in order; bounded to the columns."""
    rows = []
    for page in pages:
        for chunk in chunk_page(page):
            text = (chunk.text or "").strip()
            heading = chunk.heading if isinstance(chunk.heading, str) else " > ".join(chunk.heading or ())
            if text:
                rows.append((heading[:HEADING_MAX], text, (chunk.url or page.url or "")[:URL_MAX]))
    return rows


def _sha256(rows: Sequence[tuple[str, str, str]]) -> str:
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode()).hexdigest()


def _note(pages: Sequence[Any]) -> str:
    """What a READY sitemap or crawl left out (pages that failed, the limit that stopped it), for the admin."""
    parts = []
    stopped = getattr(pages, "stopped", "")
    if stopped:
        parts.append(f"Stopped early: {stopped}.")
    skipped = getattr(pages, "skipped", [])
    if skipped:
        shown = "; ".join(f"{url} ({reason})" for url, reason in skipped[:3])
        more = f" and {len(skipped) - 3} more" if len(skipped) > 3 else ""
        parts.append(f"{len(skipped)} page(s) skipped: {shown}{more}.")
    return " ".join(parts)[:REASON_MAX]


def _title(document: KnowledgeDocument, pages: Sequence[Any]) -> str:
    for page in pages:
        title = (getattr(page, "title", "") or "").strip()
        if title:
            return title[:TITLE_MAX]
    return document.title


def document_process(*, document_id: int) -> str:
    """Process one document (the Celery task's body). Returns what happened: ready, unchanged, failed, skipped."""
    claimed = KnowledgeDocument.objects.filter(
        pk=document_id, status__in=[Status.QUEUED, Status.PROCESSING]
    ).update(status=Status.PROCESSING, status_reason="", progress=0, updated_at=timezone.now())
    if not claimed:
        return "skipped"  # deleted, or already finished by an earlier delivery of this task
    progress = _Progress(document_id)
    try:
        return _process(document_id, progress)
    except _Gone:
        return "skipped"
    except _MissingUpload:
        return _fail(document_id, "The uploaded file was not stored: upload it again.")
    except OutboundRefused as exc:
        return _fail(document_id, _sentence(f"the URL was refused by the outbound policy: {exc}"))
    except SoftTimeLimitExceeded:
        return _fail(
            document_id, "Processing took longer than the time limit; try fewer pages or a smaller file."
        )
    except IngestError as exc:
        return _fail(document_id, _sentence(str(exc)) or type(exc).__name__)
    except Exception as exc:
        logger.exception("knowledge document %s failed", document_id)
        return _fail(document_id, f"internal error ({type(exc).__name__})")


def _process(document_id: int, progress: _Progress) -> str:
    document = KnowledgeDocument.objects.filter(pk=document_id).first()
    if document is None:
        raise _Gone
    pages = _pages(document, progress)
    progress.set(FETCHED_AT)
    rows = _chunk_rows(pages)
    if not rows:
        return _fail(document_id, "No text was found in the document.")
    max_chunks = int(captain_setting("KNOWLEDGE_MAX_CHUNKS_PER_DOCUMENT"))
    if len(rows) > max_chunks:
        return _fail(
            document_id,
            f"The document has {len(rows)} passages; at most {max_chunks} are accepted (split it).",
        )
    digest = _sha256(rows)
    title = _title(document, pages)
    # An upload is one Page of sections; a PDF's page count comes from its per-page progress.
    page_count = max(progress.total, len(pages)) if document.kind == Kind.UPLOAD else len(pages)
    now = timezone.now()
    if digest == document.content_sha256 and document.chunks.count() == len(rows):
        updated = KnowledgeDocument.objects.filter(pk=document_id, status=Status.PROCESSING).update(
            status=Status.READY,
            status_reason=_note(pages),
            progress=100,
            synced_at=now,
            pages=page_count,
            title=title,
            updated_at=now,
        )
        return "unchanged" if updated else "skipped"

    texts = [passage_text(heading, text) for heading, text, _ in rows]
    vectors: list[bytes] = []
    for start in range(0, len(texts), EMBED_BATCH):
        vectors.extend(embed_passages(texts[start : start + EMBED_BATCH]))
        progress.set(FETCHED_AT + (99 - FETCHED_AT) * len(vectors) / len(texts))

    with transaction.atomic():
        locked = KnowledgeDocument.objects.select_for_update().filter(pk=document_id).first()
        if locked is None or locked.status != Status.PROCESSING:
            raise _Gone
        locked.chunks.all().delete()
        KnowledgeChunk.objects.bulk_create(
            [
                KnowledgeChunk(
                    account_id=locked.account_id,
                    assistant_id=locked.assistant_id,
                    document=locked,
                    ordinal=ordinal,
                    heading=heading,
                    text=text,
                    url=url,
                    search_text=search_tokens(passage),
                    embedding=vector,
                )
                for ordinal, ((heading, text, url), passage, vector) in enumerate(
                    zip(rows, texts, vectors, strict=True)
                )
            ],
            batch_size=500,
        )
        KnowledgeDocument.objects.filter(pk=document_id).update(
            status=Status.READY,
            status_reason=_note(pages),
            progress=100,
            title=title,
            pages=page_count,
            chunk_count=len(rows),
            content_sha256=digest,
            synced_at=now,
            updated_at=now,
        )
        transaction.on_commit(lambda: _draft_faqs(document_id))
    return "ready"


def _draft_faqs(document_id: int) -> None:
    """Hand the new text to FAQ drafting (pending entries an admin approves). Runs after the commit: a broker
    failure here is logged and leaves the document READY (drafts can be asked for again from the FAQ review)."""
    try:
        faq_drafts_document_enqueue(document_id=document_id)
    except Exception:
        logger.exception("could not queue FAQ drafting for knowledge document %s", document_id)
