"""Custom tools, shortcuts, plans and tool confirmations."""

import re

from django.core.exceptions import ValidationError
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
from helpdesk.models import Account, Conversation, Message

SHORTCUT_COMMAND_RE = re.compile(r"^[a-z][a-z0-9_]{0,31}$")  # Telegram's bot command rule, the strictest


def validate_shortcut_command(value: str) -> None:
    if not SHORTCUT_COMMAND_RE.match(value):
        raise ValidationError("Lowercase letters, digits and _, starting with a letter (at most 32).")


class Shortcut(models.Model):
    """A quick command customers type (`/track 12345`): it either runs a tool with the given parameters before
    the model answers (the result goes into the prompt) or sends a templated message without the model."""

    class Action(models.TextChoices):
        TOOL = "tool", "Run a tool first and answer with its result"
        MESSAGE = "message", "Send a templated message"

    assistant = models.ForeignKey(Assistant, on_delete=models.CASCADE, related_name="shortcuts")
    command = models.CharField(max_length=32, validators=[validate_shortcut_command])
    description = models.CharField(max_length=256, help_text="Shown in the command menu and the playground.")
    parameters = models.JSONField(
        default=list,
        blank=True,
        help_text='The form: [{"name": "order_id", "description": "Your order number", "required": true}].',
    )
    action = models.CharField(max_length=8, choices=Action.choices, default=Action.TOOL)
    tool_name = models.CharField(max_length=64, blank=True)
    tool_arguments = models.JSONField(
        default=dict,
        blank=True,
        help_text='The tool\'s arguments, each a template over the parameters: {"query": "order {order_id}"}.',
    )
    message_template = models.TextField(
        blank=True, help_text="For a message shortcut: the text, e.g. 'Order {order_id}...'."
    )
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["command"]
        constraints = [
            models.UniqueConstraint(fields=["assistant", "command"], name="shortcut_unique_command")
        ]

    def __str__(self) -> str:
        return f"/{self.command}"


CUSTOM_TOOL_NAME_PATTERN = r"^[a-z][a-z0-9_]{0,47}$"


class CustomTool(models.Model):
    """An account-level HTTP tool a scenario may call (captain/actions/services/custom_tool_calls.py runs it through the
    outbound policy). Its secret is encrypted at rest and never shown again."""

    class Method(models.TextChoices):
        GET = "GET"
        POST = "POST"
        PUT = "PUT"
        PATCH = "PATCH"
        DELETE = "DELETE"

    class Auth(models.TextChoices):
        NONE = "none", "None"
        BEARER = "bearer", "Bearer token"
        BASIC = "basic", "Basic (user name and password)"
        API_KEY = "api_key", "API key in a header"

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="custom_tools")
    name = models.CharField(
        max_length=48, help_text="The function name the model calls (lowercase letters, digits, underscores)."
    )
    description = models.TextField(help_text="What it does and when to use it, shown to the model.")
    parameters = models.JSONField(
        default=dict, blank=True, help_text="JSON schema of the arguments (an object with properties)."
    )
    method = models.CharField(max_length=8, choices=Method.choices, default=Method.GET)
    url_template = models.CharField(
        max_length=2000,
        help_text="https URL; may use the arguments, e.g. https://shop.example/orders/{{ order_id }}",
    )
    body_template = models.TextField(
        blank=True,
        help_text="JSON body template for POST/PUT/PATCH. Empty: the arguments as a JSON object.",
    )
    auth_type = models.CharField(max_length=8, choices=Auth.choices, default=Auth.NONE)
    auth_header = models.CharField(
        max_length=100, blank=True, help_text="API key: the header it goes in (default X-API-Key)."
    )
    auth_username = models.CharField(max_length=200, blank=True, help_text="Basic: the user name.")
    secret_encrypted = models.TextField(blank=True, editable=False)
    identity_header = models.CharField(
        max_length=100,
        blank=True,
        help_text="When set, the customer's verified channel identity is sent in this header.",
    )
    timeout_seconds = models.FloatField(default=10.0, help_text="Whole request, seconds (at most 30).")
    max_response_bytes = models.PositiveIntegerField(default=200_000, help_text="Larger answers are refused.")
    response_path = models.CharField(
        max_length=500, blank=True, help_text="JSON path choosing what the model sees, e.g. $.order.status"
    )
    response_template = models.TextField(
        blank=True, help_text="Or a template over `response` (the parsed JSON) choosing what the model sees."
    )
    safe = models.BooleanField(
        default=False,
        help_text="Changes nothing the customer must approve: no confirmation is asked even for POST/PUT/"
        "PATCH/DELETE.",
    )
    confirmation_template = models.TextField(
        blank=True,
        help_text="The question the customer confirms, e.g. Refund {{ amount }} EUR for order {{ order_id }}?",
    )
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["account", "name"], name="custom_tool_unique_name")]

    def __str__(self) -> str:
        return self.name

    @property
    def changes_something(self) -> bool:
        return self.method != self.Method.GET

    @property
    def needs_confirmation(self) -> bool:
        return self.changes_something and not self.safe


class Plan(models.Model):
    """A planning-mode agent's todo list for one conversation: it persists across customer messages, so a
    plan paused for the customer's confirmation or data resumes on the next message."""

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        WAITING = "waiting", "Waiting for the customer"
        DONE = "done", "Done"
        ABANDONED = "abandoned", "Abandoned"

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    assistant = models.ForeignKey(Assistant, null=True, on_delete=models.SET_NULL, related_name="+")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="ai_plans")
    agent_key = models.CharField(max_length=64)
    goal = models.TextField(blank=True)
    steps = models.JSONField(default=list, blank=True, help_text='[{"text": ..., "done": bool}]')
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.ACTIVE, db_index=True)
    waiting_for = models.TextField(blank=True, help_text="What the plan waits for from the customer.")
    tool_calls = models.PositiveIntegerField(default=0, help_text="Tool calls made for this plan so far.")
    history = models.JSONField(default=list, blank=True, help_text="Earlier states, for the debug log.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"Plan #{self.pk} ({self.status})"


class ToolConfirmation(models.Model):
    """A side-effecting tool call the AI asked the customer to confirm. The call is stored exactly as asked:
    a confirmation runs these arguments, never ones the model writes afterwards."""

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for the customer"
        CONFIRMED = "confirmed", "Confirmed and run"
        DECLINED = "declined", "Declined"
        LAPSED = "lapsed", "Lapsed (the customer answered something else)"

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    assistant = models.ForeignKey(Assistant, null=True, on_delete=models.SET_NULL, related_name="+")
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="tool_confirmations"
    )
    agent_key = models.CharField(max_length=64)
    tool_name = models.CharField(max_length=64)
    arguments = models.JSONField(default=dict)
    question = models.TextField()
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.PENDING, db_index=True)
    asked_message = models.ForeignKey(Message, null=True, on_delete=models.SET_NULL, related_name="+")
    answer_message = models.ForeignKey(Message, null=True, on_delete=models.SET_NULL, related_name="+")
    result = models.TextField(blank=True, help_text="What the tool returned when it ran.")
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.tool_name} ({self.status})"
