"""The routing graph (config, nodes, edges, rules), its examples and the decisions runs made."""

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
from helpdesk.models import Account, Conversation, Message


class RoutingMode(models.TextChoices):
    TOOL = "tool", "Own model (handoff tools)"
    ROUTER = "router", "Dedicated router model"
    CUSTOM = "custom", "Custom router (rule prompt)"
    SEMANTIC = "semantic", "Semantic (embeddings, model tie-break)"


class RoutingTiming(models.TextChoices):
    AFTER_INPUT = "after_input", "After the customer's input"
    AFTER_REPLY = "after_reply", "After the agent's reply"
    BOTH = "both", "Both"


class RoutingConfig(models.Model):
    """Turns graph routing on for an assistant. Without it the team keeps the plain star of handoff tools."""

    assistant = models.OneToOneField(Assistant, on_delete=models.CASCADE, related_name="routing")
    default_mode = models.CharField(
        max_length=16,
        choices=RoutingMode.choices,
        default=RoutingMode.SEMANTIC,
        help_text="For nodes without a mode.",
    )
    history_rounds = models.PositiveSmallIntegerField(
        default=2, help_text="Customer rounds a router model sees."
    )
    max_hops = models.PositiveSmallIntegerField(default=3, help_text="Automatic hops per customer message.")
    star = models.BooleanField(
        default=True, help_text="Include the default edges triage <-> every enabled scenario."
    )
    router_model = models.CharField(max_length=200, blank=True, help_text="Empty: the assistant's model.")
    router_endpoint = models.CharField(
        max_length=100, blank=True, help_text="Model endpoint of the router. Empty: the assistant's."
    )
    drafts_check = models.JSONField(
        default=dict,
        blank=True,
        editable=False,
        help_text="The product's last check of whether unreviewed drafted phrases help this assistant's router "
        "(captain.routing.services.draft_check): when, on how many messages, right with and without them.",
    )

    def __str__(self) -> str:
        return f"Routing of {self.assistant}"


class RoutingNode(models.Model):
    """Routing settings of one node: `assistant` (triage) or a scenario key."""

    assistant = models.ForeignKey(Assistant, on_delete=models.CASCADE, related_name="routing_nodes")
    key = models.CharField(max_length=MAX_SCENARIO_KEY_LENGTH)
    mode = models.CharField(
        max_length=16, choices=RoutingMode.choices, blank=True, help_text="Empty: default."
    )
    timing = models.CharField(max_length=16, choices=RoutingTiming.choices, default=RoutingTiming.AFTER_INPUT)
    history_rounds = models.PositiveSmallIntegerField(null=True, blank=True)
    rule_prompt = models.TextField(
        blank=True, help_text="Custom router instruction, placed after the history."
    )
    router_model = models.CharField(max_length=200, blank=True)
    router_endpoint = models.CharField(max_length=100, blank=True)
    is_global = models.BooleanField(default=False, help_text="Reachable from every node (e.g. restart).")
    examples = models.JSONField(default=list, blank=True, help_text="Phrases customers use for this node.")
    handoff_team = models.ForeignKey(
        "helpdesk.Team",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The team whose people pick up escalations made at this node (assigned round-robin).",
    )

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["assistant", "key"], name="routing_node_unique_key")]

    def __str__(self) -> str:
        return self.key


class RoutingEdge(models.Model):
    """A directed edge: `source` may hand the conversation to `target` (node keys)."""

    assistant = models.ForeignKey(Assistant, on_delete=models.CASCADE, related_name="routing_edges")
    source = models.CharField(max_length=MAX_SCENARIO_KEY_LENGTH)
    target = models.CharField(max_length=MAX_SCENARIO_KEY_LENGTH)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["assistant", "source", "target"], name="routing_edge_unique")
        ]

    def __str__(self) -> str:
        return f"{self.source} -> {self.target}"


class RoutingRule(models.Model):
    """A model-free condition at a node: the customer's message equals / contains / matches -> target."""

    class Match(models.TextChoices):
        EXACT = "exact", "Equals"
        CONTAINS = "contains", "Contains"
        REGEX = "regex", "Matches regex"

    assistant = models.ForeignKey(Assistant, on_delete=models.CASCADE, related_name="routing_rules")
    node = models.CharField(max_length=MAX_SCENARIO_KEY_LENGTH)
    position = models.PositiveSmallIntegerField(default=0)
    match = models.CharField(max_length=16, choices=Match.choices, default=Match.EXACT)
    value = models.CharField(max_length=500)
    target = models.CharField(max_length=MAX_SCENARIO_KEY_LENGTH)

    class Meta:
        ordering = ["node", "position", "id"]

    def __str__(self) -> str:
        return f"{self.node}: {self.match} {self.value!r} -> {self.target}"


class RoutingExample(models.Model):
    """A customer-style message for one routing node that the product proposed rather than the builder typed.

    - Drafted: the assistant's model writes them from the scenario's title, description and instruction in the
      account's languages. They are in use at once while the node has no builder-written examples
      (`RoutingNode.examples`), and stop being used as soon as the builder writes some.
    - Correction: a message that was routed to the wrong node, captured when people re-route the conversation,
      a specialist hands the message back, or an agent takes over right after a routing decision. Pending until
      an administrator accepts it; accepted ones are used next to the builder's examples.
    """

    class Source(models.TextChoices):
        DRAFTED = "drafted", "Drafted by the model"
        CORRECTION = "correction", "Learned from a correction"

    class Status(models.TextChoices):
        SUGGESTED = "suggested", "Suggested (in use until the builder writes examples)"
        PENDING = "pending", "Pending review"
        ACCEPTED = "accepted", "Accepted"
        REJECTED = "rejected", "Rejected"

    class Signal(models.TextChoices):
        REROUTE = "reroute", "Re-routed by a person"
        HAND_BACK = "hand_back", "Handed back by a specialist"
        TAKEOVER = "takeover", "Taken over after a routing decision"

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    assistant = models.ForeignKey(Assistant, on_delete=models.CASCADE, related_name="routing_examples")
    key = models.CharField(max_length=MAX_SCENARIO_KEY_LENGTH, help_text="The node this message belongs to.")
    text = models.CharField(max_length=500)
    source = models.CharField(max_length=12, choices=Source.choices)
    status = models.CharField(max_length=12, choices=Status.choices, db_index=True)
    signal = models.CharField(
        max_length=12, choices=Signal.choices, blank=True, help_text="What revealed a correction."
    )
    routed_to = models.CharField(
        max_length=MAX_SCENARIO_KEY_LENGTH, blank=True, help_text="Where the router had sent the message."
    )
    drafted_from = models.CharField(
        max_length=64, blank=True, help_text="Hash of the scenario texts a draft was written from."
    )
    conversation = models.ForeignKey(
        Conversation, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    message = models.ForeignKey(Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["assistant", "key", "text"], name="routing_example_unique_text_per_node"
            )
        ]
        indexes = [models.Index(fields=["assistant", "status"], name="routing_example_status")]

    def __str__(self) -> str:
        return f"{self.key}: {self.text[:60]}"


class RoutingDecision(models.Model):
    """One routing decision taken for a customer message (mirrors the `captain.router` span)."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    assistant = models.ForeignKey(Assistant, null=True, on_delete=models.SET_NULL, related_name="+")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="routing_decisions")
    message = models.ForeignKey(Message, null=True, on_delete=models.SET_NULL, related_name="+")
    trace_id = models.CharField(max_length=32, blank=True, db_index=True)
    node = models.CharField(max_length=64)
    phase = models.CharField(max_length=16)
    mode = models.CharField(max_length=32)
    candidates = models.JSONField(default=list)
    target = models.CharField(max_length=64)
    switched = models.BooleanField(default=False)
    refused = models.BooleanField(default=False)
    reason = models.TextField(blank=True)
    prompt = models.TextField(blank=True)
    raw_output = models.TextField(blank=True)
    parsed = models.CharField(max_length=200, blank=True)
    scores = models.JSONField(default=dict, blank=True)
    model = models.CharField(max_length=200, blank=True)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    latency_ms = models.FloatField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.node} -> {self.target} ({self.mode})"
