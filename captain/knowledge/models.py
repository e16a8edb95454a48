"""Knowledge documents, their chunks, and FAQ pairs."""

from django.db import models

from captain.answering.models import CreditBalance as CreditBalance
from captain.answering.models import CreditLedgerEntry as CreditLedgerEntry
from captain.answering.models import CreditReservation as CreditReservation
from captain.answering.models import ReplyJob as ReplyJob
from captain.answering.models import Run as Run
from captain.answering.models import RunArtifact as RunArtifact
from captain.answering.models import SpanRecord as SpanRecord
from captain.assistants.models import MAX_SCENARIO_KEY_LENGTH as MAX_SCENARIO_KEY_LENGTH
from captain.assistants.models import SCENARIO_KEY_RE as SCENARIO_KEY_RE
from captain.assistants.models import TRIAGE_KEY as TRIAGE_KEY
from captain.assistants.models import Assistant as Assistant
from captain.assistants.models import AssistantInbox as AssistantInbox
from captain.assistants.models import KnowledgeMode as KnowledgeMode
from captain.assistants.models import ModelEndpoint as ModelEndpoint
from captain.assistants.models import Scenario as Scenario
from captain.assistants.models import ScenarioMode as ScenarioMode
from captain.assistants.models import WhenUnknown as WhenUnknown
from captain.assistants.models import validate_scenario_key as validate_scenario_key
from helpdesk.models import Account, Conversation


class FaqEntry(models.Model):
    """A question and its answer. Entries typed by people are approved when saved; drafts the model writes from
    a document or a resolved conversation wait as pending until someone approves them. Only approved, enabled
    entries are ever retrieved."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending approval"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"

    class Source(models.TextChoices):
        MANUAL = "manual", "Written by a person"
        DOCUMENT = "document", "Drafted from a document"
        CONVERSATION = "conversation", "Drafted from a conversation"

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    assistant = models.ForeignKey(Assistant, on_delete=models.CASCADE, related_name="faq_entries")
    question = models.TextField()
    answer = models.TextField()
    enabled = models.BooleanField(default=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.APPROVED, db_index=True)
    source = models.CharField(max_length=12, choices=Source.choices, default=Source.MANUAL)
    source_document = models.ForeignKey(
        "KnowledgeDocument", null=True, blank=True, on_delete=models.SET_NULL, related_name="faq_drafts"
    )
    source_conversation = models.ForeignKey(
        Conversation, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "FAQ entry"
        verbose_name_plural = "FAQ entries"
        ordering = ["id"]

    def __str__(self) -> str:
        return self.question[:80]


class KnowledgeDocument(models.Model):
    """One piece of an assistant's knowledge: an uploaded file, a web page, a sitemap or a bounded same-site crawl.
    Processed by a Celery task into `KnowledgeChunk` rows; `status` and `progress` say how far it got, and a failed
    document says why in `status_reason` (and touches nothing else)."""

    class Kind(models.TextChoices):
        UPLOAD = "upload", "Uploaded file"
        URL = "url", "Web page"
        SITEMAP = "sitemap", "Sitemap"
        CRAWL = "crawl", "Site crawl"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        PROCESSING = "processing", "Processing"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    assistant = models.ForeignKey(Assistant, on_delete=models.CASCADE, related_name="documents")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    title = models.CharField(max_length=300, blank=True)
    source_url = models.URLField(max_length=2000, blank=True)
    file_name = models.CharField(max_length=255, blank=True)
    content_type = models.CharField(max_length=100, blank=True)
    upload = models.BinaryField(null=True, blank=True, editable=False)
    """The uploaded bytes, kept so a re-sync can process them again (workers share no file system)."""
    size_bytes = models.PositiveBigIntegerField(default=0)
    content_sha256 = models.CharField(max_length=64, blank=True)
    """Of the extracted text: a re-sync whose text did not change keeps its chunks."""
    max_pages = models.PositiveIntegerField(default=50, help_text="Sitemap and crawl: pages fetched at most.")
    max_depth = models.PositiveSmallIntegerField(
        default=2, help_text="Crawl: links followed from the start page."
    )
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED, db_index=True)
    status_reason = models.TextField(blank=True)
    progress = models.PositiveSmallIntegerField(default=0, help_text="Percent done while processing.")
    pages = models.PositiveIntegerField(default=0)
    chunk_count = models.PositiveIntegerField(default=0)
    sync_interval_hours = models.PositiveIntegerField(
        default=0,
        help_text="Fetch the URL again this often (0: only on demand). Uploads are never re-fetched.",
    )
    synced_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return self.title or self.source_url or self.file_name or f"Document #{self.pk}"


class KnowledgeChunk(models.Model):
    """A passage of a document with the headings above it, its embedding (float32 vector of the bundled encoder,
    stored as bytes) and its keyword text (words and CJK bigrams, for the full-text side of hybrid search)."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    assistant = models.ForeignKey(Assistant, on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey(KnowledgeDocument, on_delete=models.CASCADE, related_name="chunks")
    ordinal = models.PositiveIntegerField()
    heading = models.CharField(max_length=500, blank=True)
    """The headings above the passage, outermost first, joined by " > "."""
    text = models.TextField()
    url = models.URLField(max_length=2000, blank=True)
    """The page the passage came from (crawls and sitemaps have many)."""
    search_text = models.TextField(blank=True)
    embedding = models.BinaryField()

    class Meta:
        ordering = ["document_id", "ordinal"]
        indexes = [models.Index(fields=["assistant", "document"], name="knowledge_chunk_asst_doc_idx")]

    def __str__(self) -> str:
        return f"{self.document_id}#{self.ordinal}"
