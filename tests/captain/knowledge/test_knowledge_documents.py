"""Knowledge documents: create (upload / URL), process (extract or fetch -> chunk -> embed -> replace), re-sync,
delete, scheduled re-sync, and every bad input of issue #12 item 7 ending FAILED with a reason while other
documents stay as they were.

Processing runs in this process by calling `document_process` (the Celery task's body) with the real
extraction, the real encoder and real pages served from 127.0.0.1; one test runs it in a real Celery worker.
"""

from __future__ import annotations

import datetime as dt
import io
import time

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from captain.knowledge.models import KnowledgeChunk, KnowledgeDocument
from captain.knowledge.services import knowledge_processing
from captain.knowledge.services.knowledge import (
    document_create_upload,
    document_create_url,
    document_delete,
    document_process,
    document_resync,
    documents_recover_stale,
    documents_resync_due,
)
from captain.knowledge.services.retrieval.passages import VECTOR_DIM
from tests.factories import AssistantFactory
from tests.support.static_site import Page, StaticSite

pytestmark = pytest.mark.django_db

Status = KnowledgeDocument.Status

MARKDOWN = (
    b"# Bikes\n\nOur city bike weighs 14 kg and has 7 gears.\n\n"
    b"## Returns\n\nYou may return a bike within 30 days of delivery.\n"
)
HTML = (
    b"<html><head><title>Shipping</title></head><body><main><h1>Shipping</h1>"
    b"<p>Orders ship from our Leipzig warehouse within two working days. Parcels are sent with DHL and "
    b"tracking links arrive by e-mail.</p><h2>Costs</h2><p>Shipping is free above 50 euros; below that it "
    b"costs 4.90 euros per order.</p></main></body></html>"
)


@pytest.fixture
def assistant():
    return AssistantFactory()


def upload(assistant, data: bytes, name: str = "guide.md", content_type: str = "text/markdown"):
    return document_create_upload(assistant=assistant, file_name=name, content_type=content_type, data=data)


def processed(document: KnowledgeDocument) -> KnowledgeDocument:
    document_process(document_id=document.pk)
    document.refresh_from_db()
    return document


def test_markdown_upload_becomes_ready_with_headed_embedded_chunks(assistant):
    document = upload(assistant, MARKDOWN)
    assert (document.status, document.size_bytes, bytes(document.upload)) == (
        Status.QUEUED,
        len(MARKDOWN),
        MARKDOWN,
    )

    document = processed(document)

    assert document.status == Status.READY, document.status_reason
    assert (document.progress, document.pages, document.status_reason) == (100, 1, "")
    assert len(document.content_sha256) == 64 and document.synced_at is not None
    chunks = list(KnowledgeChunk.objects.filter(document=document).order_by("ordinal"))
    assert document.chunk_count == len(chunks) >= 1
    returns = next(c for c in chunks if "30 days" in c.text)
    assert "Returns" in returns.heading
    assert all(len(bytes(c.embedding)) == VECTOR_DIM * 4 for c in chunks)
    assert "return" in returns.search_text.split()
    assert {(c.account_id, c.assistant_id) for c in chunks} == {(assistant.account_id, assistant.id)}


@pytest.mark.parametrize(
    ("name", "content_type", "data", "fact"),
    [
        ("shipping.html", "text/html", HTML, "Leipzig"),
        ("notes.txt", "text/plain", b"Support hours are 9:00 to 17:00 on weekdays.\n", "9:00"),
    ],
)
def test_html_and_text_uploads_become_ready(assistant, name, content_type, data, fact):
    document = processed(upload(assistant, data, name, content_type))

    assert document.status == Status.READY, document.status_reason
    assert any(fact in c.text for c in document.chunks.all())


def _pdf(pages: list[str]) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 5, text=text)
    return bytes(pdf.output())


def test_a_pdf_upload_becomes_ready_and_counts_its_pages(assistant):
    data = _pdf(
        ["Frames carry a ten-year warranty.", "Brakes are checked every 6 months.", "Tyres: 28 inch."]
    )

    document = processed(upload(assistant, data, "manual.pdf", "application/pdf"))

    assert document.status == Status.READY, document.status_reason
    assert document.pages == 3
    assert any("every 6 months" in c.text for c in document.chunks.all())


def test_an_upload_over_the_limit_is_failed_and_its_bytes_are_never_read(assistant, settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "KNOWLEDGE_MAX_UPLOAD_BYTES": 1024}
    stream = io.BytesIO(b"x" * 10)

    document = document_create_upload(
        assistant=assistant,
        file_name="huge.pdf",
        content_type="application/pdf",
        data=stream,
        size=50 * 2**20,
    )

    assert stream.tell() == 0  # not read: a 50 MB file is never loaded to be refused
    assert document.status == Status.FAILED
    assert "50.0 MiB" in document.status_reason and "1024 bytes" in document.status_reason
    assert document.upload is None and document.size_bytes == 50 * 2**20


def test_a_zero_byte_upload_is_failed_at_once(assistant):
    document = upload(assistant, b"", "empty.txt", "text/plain")

    assert (document.status, document.status_reason) == (Status.FAILED, "The file is empty (0 bytes).")


def test_an_upload_needs_a_name(assistant):
    with pytest.raises(ValidationError) as exc:
        upload(assistant, b"text", "\x00/", "text/plain")
    assert "file" in exc.value.message_dict


def _encrypted_pdf() -> bytes:
    from fpdf import FPDF
    from pypdf import PdfReader, PdfWriter

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.cell(text="Secret price list")
    writer = PdfWriter()
    for page in PdfReader(io.BytesIO(bytes(pdf.output()))).pages:
        writer.add_page(page)
    writer.encrypt(user_password="s3cret", owner_password="owner")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


BAD_UPLOADS = {
    "binary garbage named .txt": ("garbage.txt", "text/plain", bytes(range(256)) * 64),
    "HTML that is all script": (
        "app.html",
        "text/html",
        b"<html><head><script>var a=1;</script></head><body><script>document.write('hi')</script></body></html>",
    ),
    "corrupt PDF": (
        "broken.pdf",
        "application/pdf",
        b"%PDF-1.7\n1 0 obj << /Type /Catalog >>\ngarbage\n%%EOF",
    ),
    "encrypted PDF": ("locked.pdf", "application/pdf", None),
}


@pytest.mark.parametrize("case", list(BAD_UPLOADS))
def test_bad_uploads_fail_with_a_reason_and_touch_no_other_document(assistant, case):
    good = processed(upload(assistant, MARKDOWN))
    good_chunks = list(good.chunks.values_list("id", "text"))
    name, content_type, data = BAD_UPLOADS[case]
    data = _encrypted_pdf() if data is None else data

    bad = processed(upload(assistant, data, name, content_type))

    assert bad.status == Status.FAILED
    assert bad.status_reason and "internal error" not in bad.status_reason, bad.status_reason
    assert bad.chunks.count() == 0
    good.refresh_from_db()
    assert good.status == Status.READY
    assert list(good.chunks.values_list("id", "text")) == good_chunks


def test_an_unexpected_error_fails_the_document_as_internal_error(assistant, monkeypatch, caplog):
    """Fault injection: the encoder breaking mid-way (a real one cannot be made to fail on demand)."""

    def broken(texts):
        raise RuntimeError("encoder crashed: /secret/path")

    monkeypatch.setattr(knowledge_processing, "embed_passages", broken)

    document = processed(upload(assistant, MARKDOWN))

    assert (document.status, document.status_reason) == (Status.FAILED, "internal error (RuntimeError)")
    assert "knowledge document" in caplog.text


def test_a_web_page_is_fetched_and_its_chunks_keep_the_url(assistant):
    with StaticSite({"/help/shipping": Page(HTML)}) as site:
        document = document_create_url(assistant=assistant, kind="url", url=site.url("/help/shipping"))
        document = processed(document)

    assert document.status == Status.READY, document.status_reason
    assert document.title == "Shipping"
    assert {c.url for c in document.chunks.all()} == {site.url("/help/shipping")}


def test_a_crawl_stops_at_its_page_limit_and_says_so(assistant):
    def page(n: int) -> Page:
        links = "".join(f'<a href="/p{i}">page {i}</a> ' for i in range(1, 7))
        text = f"Page {n} explains topic number {n} of our rental service in enough words to be kept."
        return Page(
            f"<html><head><title>P{n}</title></head><body><main><h1>Topic {n}</h1><p>{text}</p>"
            f"<nav>{links}</nav></main></body></html>".encode()
        )

    with StaticSite({"/": page(0), **{f"/p{i}": page(i) for i in range(1, 7)}}) as site:
        document = processed(
            document_create_url(
                assistant=assistant, kind="crawl", url=site.url("/"), max_pages=3, max_depth=1
            )
        )

    assert document.status == Status.READY, document.status_reason
    assert document.pages == 3
    assert len({c.url for c in document.chunks.all()}) == 3
    assert document.status_reason.startswith("Stopped early:"), document.status_reason


def test_a_redirect_to_a_private_address_fails_the_document(assistant):
    with StaticSite({"/moved": Page(b"", status=302, location="http://10.0.0.1/admin")}) as site:
        document = processed(document_create_url(assistant=assistant, kind="url", url=site.url("/moved")))

    assert document.status == Status.FAILED
    assert document.status_reason and "internal error" not in document.status_reason


def test_a_page_that_never_ends_fails_the_document(assistant):
    with StaticSite({"/forever": Page(b"<html><body>", endless=True)}) as site:
        started = time.monotonic()
        document = processed(document_create_url(assistant=assistant, kind="url", url=site.url("/forever")))

    assert document.status == Status.FAILED
    assert document.status_reason and "internal error" not in document.status_reason
    assert time.monotonic() - started < 60


def test_a_sitemap_with_100000_urls_is_bounded(assistant):
    urls = "".join(f"<url><loc>http://127.0.0.1/p{i}</loc></url>" for i in range(100_000))
    body = f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
    with StaticSite({"/sitemap.xml": Page(body.encode(), content_type="application/xml")}) as site:
        document = processed(
            document_create_url(
                assistant=assistant, kind="sitemap", url=site.url("/sitemap.xml"), max_pages=5
            )
        )
        fetched = len(site.requests)

    # Either refused outright or cut to the page limit: never 100,000 fetches.
    assert fetched <= 6
    if document.status == Status.FAILED:
        assert document.status_reason and "internal error" not in document.status_reason
    else:
        assert document.pages <= 5


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("http://10.0.0.1/help", "url"),  # private address: refused by the outbound policy
        ("http://169.254.169.254/latest/meta-data/", "url"),  # cloud metadata
        ("ftp://127.0.0.1/file", "url"),
        ("not a url", "url"),
        ("", "url"),
    ],
)
def test_a_refused_url_is_a_validation_error_and_stores_nothing(assistant, url, field):
    with pytest.raises(ValidationError) as exc:
        document_create_url(assistant=assistant, kind="url", url=url)

    assert field in exc.value.message_dict
    assert not KnowledgeDocument.objects.exists()


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"kind": "crawl", "max_pages": 100_000}, "max_pages"),
        ({"kind": "crawl", "max_pages": 0}, "max_pages"),
        ({"kind": "crawl", "max_depth": 50}, "max_depth"),
        ({"kind": "url", "sync_interval_hours": -1}, "sync_interval_hours"),
        ({"kind": "upload"}, "kind"),
    ],
)
def test_limits_out_of_range_are_validation_errors(assistant, kwargs, field):
    with pytest.raises(ValidationError) as exc:
        document_create_url(assistant=assistant, url="http://127.0.0.1:9/", **kwargs)

    assert field in exc.value.message_dict


def test_delete_removes_the_chunks(assistant):
    document = processed(upload(assistant, MARKDOWN))
    other = processed(upload(assistant, HTML, "shipping.html", "text/html"))
    assert KnowledgeChunk.objects.filter(document=document).exists()

    document_delete(document=document)

    assert not KnowledgeChunk.objects.filter(document_id=document.pk).exists()
    assert KnowledgeChunk.objects.filter(document=other).count() == other.chunk_count > 0


def test_a_failed_resync_keeps_the_old_chunks(assistant):
    site = StaticSite({"/faq": Page(HTML)})
    with site:
        document = processed(document_create_url(assistant=assistant, kind="url", url=site.url("/faq")))
        before = list(document.chunks.values_list("id", "text"))
        site.pages["/faq"] = Page(b"server error", status=500, content_type="text/plain")

        document_resync(document=document)
        document = processed(document)

    assert document.status == Status.FAILED and document.status_reason
    assert list(document.chunks.values_list("id", "text")) == before
    assert document.chunk_count == len(before)


def test_a_resync_with_the_same_text_keeps_the_chunks_and_a_changed_one_replaces_them(assistant):
    site = StaticSite({"/faq": Page(HTML)})
    with site:
        document = processed(document_create_url(assistant=assistant, kind="url", url=site.url("/faq")))
        ids = list(document.chunks.values_list("id", flat=True))
        first_sync = document.synced_at

        document_resync(document=document)
        assert document_process(document_id=document.pk) == "unchanged"
        document.refresh_from_db()
        assert list(document.chunks.values_list("id", flat=True)) == ids
        assert document.status == Status.READY and document.synced_at > first_sync

        site.pages["/faq"] = Page(HTML.replace(b"Leipzig", b"Dresden"))
        document_resync(document=document)
        document = processed(document)

    assert document.status == Status.READY
    assert not set(document.chunks.values_list("id", flat=True)) & set(ids)
    assert any("Dresden" in c.text for c in document.chunks.all())


def test_processing_is_idempotent_and_ignores_deleted_documents(assistant):
    document = processed(upload(assistant, MARKDOWN))
    ids = list(document.chunks.values_list("id", flat=True))

    assert document_process(document_id=document.pk) == "skipped"  # a redelivered task: already done
    assert list(document.chunks.values_list("id", flat=True)) == ids

    document_delete(document=document)
    assert document_process(document_id=document.pk) == "skipped"
    assert not KnowledgeDocument.objects.filter(pk=document.pk).exists()


def test_an_upload_is_reprocessed_from_its_stored_bytes_but_a_refused_one_cannot_be(assistant, settings):
    document = processed(upload(assistant, MARKDOWN))
    document_resync(document=document)
    assert document.status == Status.QUEUED
    assert processed(document).status == Status.READY

    settings.CAPTAIN = {**settings.CAPTAIN, "KNOWLEDGE_MAX_UPLOAD_BYTES": 4}
    refused = upload(assistant, MARKDOWN)
    with pytest.raises(ValidationError):
        document_resync(document=refused)


def test_progress_is_saved_at_most_every_half_second(assistant):
    document = upload(assistant, MARKDOWN)
    KnowledgeDocument.objects.filter(pk=document.pk).update(status=Status.PROCESSING)
    progress = knowledge_processing._Progress(document.pk)

    progress.set(10)
    progress.set(20)  # too soon: not written
    document.refresh_from_db()
    assert document.progress == 10

    progress.saved_at -= knowledge_processing.PROGRESS_SAVE_SECONDS
    progress.set(30)
    document.refresh_from_db()
    assert document.progress == 30


def test_due_documents_are_queued_for_a_resync(assistant):
    now = timezone.now()

    def url_doc(interval: int, synced_hours_ago: float | None, status=Status.READY, kind="url"):
        return KnowledgeDocument.objects.create(
            account_id=assistant.account_id,
            assistant=assistant,
            kind=kind,
            source_url="http://127.0.0.1:9/",
            status=status,
            sync_interval_hours=interval,
            synced_at=None if synced_hours_ago is None else now - dt.timedelta(hours=synced_hours_ago),
        )

    due = url_doc(1, 2)
    never_synced = url_doc(24, None, status=Status.FAILED)
    recent = url_doc(24, 2)
    on_demand = url_doc(0, 100)
    busy = url_doc(1, 5, status=Status.PROCESSING)

    assert documents_resync_due(now=now) == 2

    statuses = dict(KnowledgeDocument.objects.values_list("pk", "status"))
    assert statuses[due.pk] == statuses[never_synced.pk] == Status.QUEUED
    assert statuses[recent.pk] == statuses[on_demand.pk] == Status.READY
    assert statuses[busy.pk] == Status.PROCESSING
    assert documents_resync_due(now=now) == 0  # already queued: not stacked up


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_a_real_celery_worker_processes_an_upload_after_commit(redis_url, tmp_path):
    """The whole path: the create commits, `on_commit` publishes to the real redis-server, a worker process
    (prefork, its own encoder) claims the task, embeds, and the row says READY."""
    from tests.support.database import database_url_for_subprocess
    from tests.support.servers import start_celery_worker, wait_for

    worker = start_celery_worker(
        env={"DATABASE_URL": database_url_for_subprocess(), "REDIS_URL": redis_url},
        log_path=tmp_path / "worker.log",
    )
    try:
        document = upload(AssistantFactory(), MARKDOWN)

        def finished() -> bool:
            document.refresh_from_db()
            return document.status in (Status.READY, Status.FAILED)

        wait_for(finished, timeout=90, interval=0.2, what="the worker to process the document")
    finally:
        worker.stop()

    assert document.status == Status.READY, (document.status_reason, worker.log()[-3000:])
    assert document.chunks.count() == document.chunk_count >= 1
    assert "knowledge_document_process" in worker.log()


def _queued_task_names(redis_url: str) -> list[str]:
    import json

    import redis

    raw = redis.Redis.from_url(redis_url).lrange("captain_background", 0, -1)
    # Celery's redis transport LPUSHes: the newest message is first. Oldest first here.
    return [json.loads(message)["headers"]["task"] for message in reversed(raw)]


def test_create_queues_processing_and_ready_queues_faq_drafting_after_commit(
    assistant, redis_url, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        document = upload(assistant, MARKDOWN)
    assert _queued_task_names(redis_url) == ["captain.tasks.knowledge_document_process"]

    with django_capture_on_commit_callbacks(execute=True):
        assert document_process(document_id=document.pk) == "ready"
    assert _queued_task_names(redis_url)[-1] == "captain.tasks.faq_drafts_from_document"

    with django_capture_on_commit_callbacks(execute=True):
        document_resync(document=document)
        assert document_process(document_id=document.pk) == "unchanged"
    # Unchanged text drafts nothing new: only the re-sync's own processing task was queued.
    assert _queued_task_names(redis_url)[-1] == "captain.tasks.knowledge_document_process"


def test_documents_whose_task_was_lost_are_recovered(
    assistant, redis_url, django_capture_on_commit_callbacks
):
    now = timezone.now()
    lost_queued = upload(assistant, MARKDOWN)
    killed = upload(assistant, MARKDOWN)
    fresh = upload(assistant, MARKDOWN)
    long_ago = now - dt.timedelta(hours=2)
    KnowledgeDocument.objects.filter(pk=lost_queued.pk).update(updated_at=long_ago)
    KnowledgeDocument.objects.filter(pk=killed.pk).update(
        status=Status.PROCESSING, progress=40, updated_at=long_ago
    )
    KnowledgeDocument.objects.filter(pk=fresh.pk).update(status=Status.PROCESSING)

    with django_capture_on_commit_callbacks(execute=True):
        assert documents_recover_stale(now=now) == 1

    statuses = {d.pk: (d.status, d.status_reason) for d in KnowledgeDocument.objects.all()}
    assert statuses[lost_queued.pk] == (Status.QUEUED, "")
    assert statuses[killed.pk] == (
        Status.FAILED,
        "Processing was interrupted (the worker stopped); re-sync to try again.",
    )
    assert statuses[fresh.pk] == (Status.PROCESSING, "")
    assert _queued_task_names(redis_url) == ["captain.tasks.knowledge_document_process"]
    assert processed(lost_queued).status == Status.READY
