"""Reply jobs, runs and what they recorded (spans, artifacts), and the credit ledger."""

from django.db import models
from django.db.models import F, Q
from django.utils import timezone

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
from helpdesk.models import Account, Conversation, Message


class ReplyJob(models.Model):
    """One customer message the AI must answer: created with the message, in the ingest transaction (through
    captain.integration's responder), so a stored message always has its job. The attempt counter and the
    sweeper work on these rows (captain/answering/services/jobs.py); the message row itself belongs to helpdesk."""

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for the AI"
        DONE = "done", "Answered or handed off"
        SKIPPED = "skipped", "Skipped (people in charge)"

    message = models.OneToOneField(
        Message, on_delete=models.CASCADE, primary_key=True, related_name="reply_job"
    )
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="+")
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    # When a task for this message was last put on the queue; the sweeper claims stale ones by updating it.
    enqueued_at = models.DateTimeField(null=True, blank=True)
    # The message's own creation time (debounce and the sweeper's grace period count from it); a default, not
    # auto_now_add, so the data migration can carry it.
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            models.Index(fields=["status", "created_at"], name="replyjob_status_idx"),
            models.Index(fields=["conversation", "status"], name="replyjob_conversation_idx"),
        ]

    def __str__(self) -> str:
        return f"reply job for message {self.message_id}: {self.status}"


class CreditBalance(models.Model):
    """An account's credit limit and how much of it is used. Debits are one conditional UPDATE (never
    check-then-act), so concurrent runs cannot overdraw."""

    account = models.OneToOneField(Account, on_delete=models.CASCADE, related_name="credit_balance")
    limit = models.PositiveIntegerField(default=1000)
    used = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(used__lte=F("limit")), name="credit_used_within_limit")
        ]

    def __str__(self) -> str:
        return f"{self.account}: {self.used}/{self.limit}"

    @property
    def remaining(self) -> int:
        """Not yet used; runs in progress hold part of it (`CreditReservation`, see services/credits.py)."""
        return max(self.limit - self.used, 0)


class CreditReservation(models.Model):
    """Credits held for the run answering `message` before its model is called, so concurrent runs cannot
    all call a paid model and then find the limit reached. Settled into a ledger row on a reply, released
    otherwise (captain/answering/services/credits.py). Rows, not a counter on the balance: a hold vanishes with its
    message, so nothing can leak held credits."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    message = models.OneToOneField(Message, on_delete=models.CASCADE, related_name="+")
    amount = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.amount} held for message {self.message_id}"


class CreditLedgerEntry(models.Model):
    """One billable event, written in the same transaction as the message it pays for."""

    class Kind(models.TextChoices):
        AI_REPLY = "ai_reply", "AI reply"
        REFUND = "refund", "Refund (delivery failed)"
        COPILOT = "copilot", "Copilot (draft, summary, rewrite for an agent)"

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    # The message paid for; empty for copilot work, which pays for its `copilot_run` instead.
    message = models.ForeignKey(Message, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    copilot_run = models.ForeignKey(
        "CopilotRun", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.AI_REPLY)
    amount = models.IntegerField(help_text="Credits used (negative for a refund).")
    assistant = models.ForeignKey(Assistant, null=True, on_delete=models.SET_NULL, related_name="+")
    agent_key = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "credit ledger entries"
        constraints = [
            models.UniqueConstraint(fields=["message", "kind"], name="ledger_unique_message_kind"),
            models.UniqueConstraint(fields=["copilot_run", "kind"], name="ledger_unique_copilot_kind"),
            models.CheckConstraint(
                condition=Q(message__isnull=False) | Q(copilot_run__isnull=False),
                name="ledger_pays_for_something",
            ),
        ]
        indexes = [models.Index(fields=["account", "created_at"], name="ledger_account_created_idx")]

    def __str__(self) -> str:
        return f"{self.kind} {self.amount} for message {self.message_id}"


class Run(models.Model):
    """One AI run: which customer message triggered it, which agents acted, how it ended, what it cost."""

    class Outcome(models.TextChoices):
        REPLY = "reply", "Reply"
        HUMAN_HANDOFF = "human_handoff", "Human handoff"
        RESOLVE = "resolve", "Resolved"
        ERROR = "error", "Error (handed to people)"
        SKIPPED = "skipped", "Skipped"

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    assistant = models.ForeignKey(Assistant, null=True, on_delete=models.SET_NULL, related_name="runs")
    conversation = models.ForeignKey(
        Conversation, null=True, on_delete=models.CASCADE, related_name="ai_runs"
    )
    trigger_message = models.ForeignKey(Message, null=True, on_delete=models.SET_NULL, related_name="+")
    reply_message = models.ForeignKey(Message, null=True, on_delete=models.SET_NULL, related_name="+")
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    detail = models.TextField(
        blank=True, help_text="Handoff reason or internal error detail (never shown to the customer)."
    )
    start_agent_key = models.CharField(max_length=64, blank=True)
    end_agent_key = models.CharField(max_length=64, blank=True)
    route = models.JSONField(default=list)
    llm_calls = models.PositiveIntegerField(default=0)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    credit_used = models.BooleanField(default=False)
    sources = models.JSONField(default=list, blank=True)
    """The knowledge put before the model (`captain.runtime.knowledge.Source.as_record`), each marked `cited`
    when the reply used it."""
    trace_id = models.CharField(max_length=32, blank=True, db_index=True)
    duration_ms = models.PositiveIntegerField(default=0)
    reasoning = models.TextField(
        blank=True,
        help_text="Why the model answered as it did (its structured reply); never sent to the customer.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"Run #{self.pk}: {self.outcome}"


class SpanRecord(models.Model):
    """A finished OpenTelemetry span kept in the database so the dashboard can show what the AI did and why."""

    trace_id = models.CharField(max_length=32, db_index=True)
    span_id = models.CharField(max_length=16)
    parent_span_id = models.CharField(max_length=16, blank=True)
    name = models.CharField(max_length=200)
    start_time = models.DateTimeField()
    end_time = models.DateTimeField()
    status = models.CharField(max_length=16, blank=True)
    attributes = models.JSONField(default=dict)
    events = models.JSONField(default=list)

    class Meta:
        ordering = ["start_time", "id"]
        constraints = [models.UniqueConstraint(fields=["trace_id", "span_id"], name="span_unique_id")]
        # The retention sweep picks its batches by age (captain.answering.services.span_retention).
        indexes = [models.Index(fields=["start_time"], name="span_start_time")]

    def __str__(self) -> str:
        return f"{self.name} {self.trace_id}/{self.span_id}"


class RunArtifact(models.Model):
    """A long tool output kept out of the model's context: the context holds a short reference, a tool argument
    naming the reference receives the full text, and the debug log shows it."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="artifacts")
    ref = models.CharField(max_length=16)
    tool_name = models.CharField(max_length=64)
    content = models.TextField()
    size = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["run", "ref"], name="run_artifact_unique_ref")]

    def __str__(self) -> str:
        return f"{self.ref} ({self.tool_name}, {self.size} chars)"
