"""Memory variables and the values remembered per contact."""

import re

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
