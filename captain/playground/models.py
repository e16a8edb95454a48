"""A playground run."""

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
from captain.copilot.models import CopilotRun as CopilotRun
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
from helpdesk.models import Account


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
    """The finished turn (captain.playground.services.playground.PlaygroundTurn as a dict)."""
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["created_at"], name="playground_run_created_idx")]

    def __str__(self) -> str:
        return f"Playground run #{self.pk}: {self.status}"
