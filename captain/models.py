"""Captain's data: assistants and their scenarios, FAQ knowledge, credits, and the record of each AI run."""

import re

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from captain.actions.models import CUSTOM_TOOL_NAME_PATTERN as CUSTOM_TOOL_NAME_PATTERN
from captain.actions.models import SHORTCUT_COMMAND_RE as SHORTCUT_COMMAND_RE
from captain.actions.models import CustomTool as CustomTool
from captain.actions.models import Plan as Plan
from captain.actions.models import Shortcut as Shortcut
from captain.actions.models import ToolConfirmation as ToolConfirmation
from captain.actions.models import validate_shortcut_command as validate_shortcut_command
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
from captain.knowledge.models import FaqEntry as FaqEntry
from captain.knowledge.models import KnowledgeChunk as KnowledgeChunk
from captain.knowledge.models import KnowledgeDocument as KnowledgeDocument
from captain.routing.models import RoutingConfig as RoutingConfig
from captain.routing.models import RoutingDecision as RoutingDecision
from captain.routing.models import RoutingEdge as RoutingEdge
from captain.routing.models import RoutingExample as RoutingExample
from captain.routing.models import RoutingMode as RoutingMode
from captain.routing.models import RoutingNode as RoutingNode
from captain.routing.models import RoutingRule as RoutingRule
from captain.routing.models import RoutingTiming as RoutingTiming
from helpdesk.models import Account, Contact, Conversation


class CopilotRun(models.Model):
    """One piece of copilot work an agent asked for in a conversation (captain.services.copilot): a draft reply
    grounded in the assistant's knowledge, a summary, or a rewrite of the agent's text. Runs in a worker,
    streams into the composer over the conversation's live channel, and is charged like an AI reply when it
    produced text (nothing on failure)."""

    class Kind(models.TextChoices):
        DRAFT = "draft", "Draft a reply"
        SUMMARY = "summary", "Summarise the conversation"
        REPHRASE = "rephrase", "Rephrase"
        FIX_TONE = "fix_tone", "Fix tone (friendly, professional)"
        TRANSLATE = "translate", "Translate into the customer's language"

    class Status(models.TextChoices):
        QUEUED = "queued", "Waiting for a worker"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    assistant = models.ForeignKey(Assistant, null=True, on_delete=models.SET_NULL, related_name="+")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="copilot_runs")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    input_text = models.TextField(
        blank=True, help_text="The agent's text to rewrite (rephrase, tone, translate)."
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    output = models.TextField(blank=True)
    sources = models.JSONField(default=list, blank=True)
    """The knowledge a draft was grounded in (`captain.runtime.knowledge.Source.as_record`)."""
    error = models.CharField(max_length=500, blank=True)
    llm_calls = models.PositiveIntegerField(default=0)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    credit_used = models.BooleanField(default=False)
    trace_id = models.CharField(max_length=32, blank=True, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["conversation", "created_at"], name="copilot_run_conversation_idx")]

    def __str__(self) -> str:
        return f"Copilot {self.kind} #{self.pk}: {self.status}"


class PlaygroundRun(models.Model):
    """One playground message on its way through a worker. The transcript stays in the admin's session (it is
    nobody's customer conversation); this row carries the turn to the worker, and its progress and result back
    to the page. Rows older than a day are deleted by the sweeper."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Waiting for a worker"
        RUNNING = "running", "Running"
        DONE = "done", "Done"

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    assistant = models.ForeignKey(Assistant, on_delete=models.CASCADE, related_name="playground_runs")
    start_key = models.CharField(max_length=64)
    history = models.JSONField(default=list, blank=True)
    """Earlier playground turns as chat messages (what the customer would have seen)."""
    message = models.TextField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    progress = models.JSONField(default=list, blank=True)
    """Steps so far, one short line each (routing decisions, agents that answered), shown while it runs."""
    result = models.JSONField(null=True, blank=True)
    """The finished turn (captain.services.playground.PlaygroundTurn as a dict)."""
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["created_at"], name="playground_run_created_idx")]

    def __str__(self) -> str:
        return f"Playground run #{self.pk}: {self.status}"


MEMORY_NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


def validate_memory_name(value: str) -> None:
    if not MEMORY_NAME_RE.match(value):
        raise ValidationError("Lowercase letters, digits and _, starting with a letter (at most 64).")


class MemoryVariable(models.Model):
    """Something the AI should remember about a customer or a conversation (order number, city, plan), declared
    by the builder. The model writes values through the `remember` tool, agents in the conversation view, other
    systems through the API, each only where the declaration allows it."""

    class Scope(models.TextChoices):
        CONTACT = "contact", "The contact (kept across conversations)"
        CONVERSATION = "conversation", "This conversation only"

    class Kind(models.TextChoices):
        TEXT = "text", "Text"
        NUMBER = "number", "Number"
        BOOLEAN = "boolean", "Yes / no"
        CHOICE = "choice", "One of a list"

    assistant = models.ForeignKey(Assistant, on_delete=models.CASCADE, related_name="memory_variables")
    name = models.CharField(max_length=64, validators=[validate_memory_name])
    description = models.CharField(
        max_length=500, help_text="What the value is, in words the model understands (when to write it)."
    )
    kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.TEXT)
    choices = models.JSONField(default=list, blank=True, help_text="The allowed values of a choice variable.")
    default = models.CharField(max_length=500, blank=True, help_text="Used while nothing is stored.")
    scope = models.CharField(max_length=16, choices=Scope.choices, default=Scope.CONTACT)
    writable_by_ai = models.BooleanField(default=True, help_text="The model may write it with `remember`.")
    writable_by_agents = models.BooleanField(default=True, help_text="Support agents may edit it.")
    writable_by_api = models.BooleanField(default=True, help_text="The REST API may write it.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["assistant", "name"], name="memory_variable_unique_name")
        ]

    def __str__(self) -> str:
        return self.name


class MemoryValue(models.Model):
    """The stored value of one memory variable for one contact (contact scope) or conversation."""

    class Writer(models.TextChoices):
        AI = "ai", "The AI"
        AGENT = "agent", "A support agent"
        API = "api", "The API"

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    variable = models.ForeignKey(MemoryVariable, on_delete=models.CASCADE, related_name="values")
    contact = models.ForeignKey(Contact, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    conversation = models.ForeignKey(
        Conversation, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    value = models.JSONField()
    written_by = models.CharField(max_length=8, choices=Writer.choices)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(contact__isnull=False, conversation__isnull=True)
                | Q(contact__isnull=True, conversation__isnull=False),
                name="memory_value_one_owner",
            ),
            models.UniqueConstraint(
                fields=["variable", "contact"],
                condition=Q(contact__isnull=False),
                name="memory_value_unique_contact",
            ),
            models.UniqueConstraint(
                fields=["variable", "conversation"],
                condition=Q(conversation__isnull=False),
                name="memory_value_unique_conversation",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.variable_id}={self.value!r}"
