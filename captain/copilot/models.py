"""A copilot run: one agent's request."""

from django.conf import settings
from django.db import models

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
from captain.memory.models import MEMORY_NAME_RE as MEMORY_NAME_RE
from captain.memory.models import MemoryValue as MemoryValue
from captain.memory.models import MemoryVariable as MemoryVariable
from captain.memory.models import validate_memory_name as validate_memory_name
from captain.routing.models import RoutingConfig as RoutingConfig
from captain.routing.models import RoutingDecision as RoutingDecision
from captain.routing.models import RoutingEdge as RoutingEdge
from captain.routing.models import RoutingExample as RoutingExample
from captain.routing.models import RoutingMode as RoutingMode
from captain.routing.models import RoutingNode as RoutingNode
from captain.routing.models import RoutingRule as RoutingRule
from captain.routing.models import RoutingTiming as RoutingTiming
from helpdesk.models import Account, Conversation


class CopilotRun(models.Model):
    """One piece of copilot work an agent asked for in a conversation (captain.copilot.services.copilot): a draft reply
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
