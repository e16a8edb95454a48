"""Writes of an assistant's knowledge documents: uploads, URL / sitemap / crawl imports, re-sync, delete.

A document is created QUEUED and processed by a Celery task after the creating transaction commits
(`captain.knowledge.services.knowledge_processing.document_process` is the task's body). Bad input that can be judged at
once is refused in two ways: a URL the outbound policy refuses, or limits out of range, is a `ValidationError`
(nothing is stored, the API answers 400); an upload that is empty or over `KNOWLEDGE_MAX_UPLOAD_BYTES` is kept as
a FAILED document saying why (its bytes are not stored), so the person who uploaded it sees what happened to it.
The account is always the assistant's, never the caller's word.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import BinaryIO

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import transaction
from django.utils import timezone

from captain.assistants.models import Assistant
from captain.conf import captain_setting
from captain.knowledge.models import KnowledgeDocument
from captain.knowledge.services.knowledge_processing import document_process
from captain.queue import task
from helpdesk.outbound import validate_outbound_url

__all__ = [
    "URL_KINDS",
    "document_create_upload",
    "document_create_url",
    "document_delete",
    "document_process",
    "document_resync",
    "documents_recover_stale",
    "documents_resync_due",
]

logger = logging.getLogger(__name__)

Kind = KnowledgeDocument.Kind
Status = KnowledgeDocument.Status

URL_KINDS: tuple[str, ...] = (Kind.URL, Kind.SITEMAP, Kind.CRAWL)
FILE_NAME_MAX = KnowledgeDocument._meta.get_field("file_name").max_length or 255
CONTENT_TYPE_MAX = KnowledgeDocument._meta.get_field("content_type").max_length or 100
URL_MAX = KnowledgeDocument._meta.get_field("source_url").max_length or 2000


def _enqueue(document_id: int) -> None:
    """Queue processing once the surrounding transaction commits (a worker must find the row)."""
    knowledge_document_process = task("captain.tasks.knowledge_document_process")

    def publish() -> None:
        try:
            knowledge_document_process.delay(document_id)
        except Exception:  # broker down: the document says so instead of staying queued for ever
            logger.exception("could not queue knowledge document %s", document_id)
            KnowledgeDocument.objects.filter(pk=document_id, status=Status.QUEUED).update(
                status=Status.FAILED,
                status_reason="Could not queue the document for processing (task queue unavailable); re-sync it.",
            )

    transaction.on_commit(publish)


def _clean_name(value: str, limit: int) -> str:
    # Names come from a client: no control characters, no path, bounded to the column.
    name = "".join(ch for ch in value if ch.isprintable()).strip()
    return name.rsplit("/", 1)[-1].rsplit("\\", 1)[-1][:limit]


def document_create_upload(
    *,
    assistant: Assistant,
    file_name: str,
    content_type: str,
    data: bytes | BinaryIO,
    size: int | None = None,
) -> KnowledgeDocument:
    """Store an uploaded file and queue its processing. `data` may be a file object (an upload Django spooled to
    disk) with its `size`: a file over the limit is then never read into memory."""
    name = _clean_name(file_name, FILE_NAME_MAX)
    if not name:
        raise ValidationError({"file": ["The file has no name."]})
    if size is None:
        size = len(data) if isinstance(data, bytes) else None
    limit = int(captain_setting("KNOWLEDGE_MAX_UPLOAD_BYTES"))
    document = KnowledgeDocument(
        account_id=assistant.account_id,
        assistant=assistant,
        kind=Kind.UPLOAD,
        title=name[:300],
        file_name=name,
        content_type=_clean_name(content_type, CONTENT_TYPE_MAX),
    )
    reason = ""
    if size is not None and size > limit:
        reason = f"The file is {_mib(size)}; files of at most {_mib(limit)} are accepted."
    else:
        raw = data if isinstance(data, bytes) else data.read(limit + 1)
        size = len(raw)
        if size > limit:  # a stream that did not say its size
            reason = f"The file is larger than {_mib(limit)}; files of at most {_mib(limit)} are accepted."
        elif size == 0:
            reason = "The file is empty (0 bytes)."
        else:
            document.upload = raw
    document.size_bytes = size or 0
    if reason:
        document.status = Status.FAILED
        document.status_reason = reason
    with transaction.atomic():
        document.save()
        if not reason:
            _enqueue(document.pk)
    return document


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB" if size >= 1024 * 1024 else f"{size} bytes"


def _bounded(name: str, value: int | None, *, default: int, cap: int, minimum: int) -> int:
    if value is None:
        return min(default, cap)
    if not minimum <= value <= cap:
        raise ValidationError({name: [f"Must be between {minimum} and {cap}."]})
    return value


def _checked_url(url: str) -> str:
    url = (url or "").strip()
    if not url:
        raise ValidationError({"url": ["A URL is required."]})
    if len(url) > URL_MAX:
        raise ValidationError({"url": [f"At most {URL_MAX} characters."]})
    try:
        URLValidator(schemes=["http", "https"])(url)
        validate_outbound_url(url)
    except ValidationError as exc:
        raise ValidationError({"url": exc.messages}) from exc
    return url


def document_create_url(
    *,
    assistant: Assistant,
    kind: str,
    url: str,
    max_pages: int | None = None,
    max_depth: int | None = None,
    sync_interval_hours: int = 0,
) -> KnowledgeDocument:
    """Import a web page, a sitemap or a bounded same-site crawl. The URL must pass the outbound policy now (and
    again on every connection the fetch makes)."""
    if kind not in URL_KINDS:
        raise ValidationError({"kind": [f"Must be one of: {', '.join(URL_KINDS)}."]})
    checked = _checked_url(url)
    pages_cap = int(captain_setting("KNOWLEDGE_MAX_PAGES"))
    depth_cap = int(captain_setting("KNOWLEDGE_MAX_DEPTH"))
    interval_cap = int(captain_setting("KNOWLEDGE_MAX_SYNC_INTERVAL_HOURS"))
    field_defaults = {f.name: f.default for f in KnowledgeDocument._meta.concrete_fields}
    document = KnowledgeDocument(
        account_id=assistant.account_id,
        assistant=assistant,
        kind=kind,
        source_url=checked,
        title=checked[:300],
        max_pages=_bounded(
            "max_pages", max_pages, default=field_defaults["max_pages"], cap=pages_cap, minimum=1
        ),
        max_depth=_bounded(
            "max_depth", max_depth, default=field_defaults["max_depth"], cap=depth_cap, minimum=0
        ),
        sync_interval_hours=_bounded(
            "sync_interval_hours", sync_interval_hours, default=0, cap=interval_cap, minimum=0
        ),
    )
    with transaction.atomic():
        document.save()
        _enqueue(document.pk)
    return document


def document_resync(*, document: KnowledgeDocument) -> KnowledgeDocument:
    """Queue the document again: an upload is processed from its stored bytes, a URL is fetched again. Its chunks
    stay searchable until the new ones replace them."""
    # A query, not `document.upload`: readers defer the bytes (up to the upload limit) and this needs no copy.
    stored = KnowledgeDocument.objects.filter(pk=document.pk, upload__isnull=False).exists()
    if document.kind == Kind.UPLOAD and not stored:
        raise ValidationError(
            {"non_field_errors": ["This upload was not stored (see its reason): upload the file again."]}
        )
    with transaction.atomic():
        updated = KnowledgeDocument.objects.filter(pk=document.pk).update(
            status=Status.QUEUED, status_reason="", progress=0, updated_at=timezone.now()
        )
        if updated:
            _enqueue(document.pk)
    document.refresh_from_db()
    return document


def documents_resync_due(*, now: dt.datetime | None = None) -> int:
    """Queue every URL document whose `sync_interval_hours` have passed since it was last synced (or that never
    synced). Documents already queued or processing are left alone, so a slow crawl is not stacked up; but those
    stuck there longer than a task can live are recovered first (`documents_recover_stale`)."""
    now = now or timezone.now()
    count = documents_recover_stale(now=now)
    candidates = (
        KnowledgeDocument.objects.filter(sync_interval_hours__gt=0, kind__in=URL_KINDS)
        .exclude(status__in=[Status.QUEUED, Status.PROCESSING])
        .values_list("pk", "synced_at", "sync_interval_hours")
        .order_by("synced_at")
    )
    # Interval arithmetic in Python: SQLite cannot multiply an interval by a column (few rows have an interval).
    ids = [
        pk
        for pk, synced_at, hours in candidates.iterator()
        if synced_at is None or synced_at <= now - dt.timedelta(hours=hours)
    ]
    for document_id in ids:
        with transaction.atomic():
            # Claim it: of two beat ticks racing, only one sees the status still "not queued".
            claimed = (
                KnowledgeDocument.objects.filter(pk=document_id)
                .exclude(status__in=[Status.QUEUED, Status.PROCESSING])
                .update(status=Status.QUEUED, status_reason="", progress=0, updated_at=now)
            )
            if claimed:
                _enqueue(document_id)
                count += 1
    return count


def documents_recover_stale(*, now: dt.datetime | None = None) -> int:
    """Documents whose task was lost: still QUEUED (the broker dropped the message) or PROCESSING (the worker was
    killed) longer than the task's hard time limit. A queued one is queued again (processing is idempotent); one
    that was processing is marked FAILED, not retried, so a file that kills the worker cannot loop for ever."""
    now = now or timezone.now()
    stale_before = now - dt.timedelta(seconds=float(captain_setting("SWEEP_AFTER_SECONDS")))
    stale = KnowledgeDocument.objects.filter(updated_at__lt=stale_before)
    stale.filter(status=Status.PROCESSING).update(
        status=Status.FAILED,
        status_reason="Processing was interrupted (the worker stopped); re-sync to try again.",
        progress=0,
        updated_at=now,
    )
    requeued = 0
    for document_id in stale.filter(status=Status.QUEUED).values_list("pk", flat=True):
        with transaction.atomic():
            if KnowledgeDocument.objects.filter(
                pk=document_id, status=Status.QUEUED, updated_at__lt=stale_before
            ).update(updated_at=now):
                _enqueue(document_id)
                requeued += 1
    return requeued


def document_delete(*, document: KnowledgeDocument) -> None:
    """The document and its chunks (foreign-key cascade): nothing of it is retrieved afterwards."""
    document.delete()
