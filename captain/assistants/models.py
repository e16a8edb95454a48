"""Assistants, their scenarios, model endpoints and inboxes."""

import re

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils import translation
from django.utils.translation import gettext, gettext_noop

from captain.runtime.types import HANDOFF_PREFIX, MAX_TOOL_NAME_LENGTH
from helpdesk.models import Account, Inbox

TRIAGE_KEY = "assistant"


MAX_SCENARIO_KEY_LENGTH = MAX_TOOL_NAME_LENGTH - len(HANDOFF_PREFIX)  # 53: handoff_to_<key> fits in 64


SCENARIO_KEY_RE = re.compile(r"^[a-z0-9_]+$")

# The texts a new assistant sends customers until a builder writes its own (marked for the dashboard's catalog:
# an inbox whose customers read Chinese gets them in Chinese, `customer_text`).
DEFAULT_HANDOFF_MESSAGE = gettext_noop(
    "I'm connecting you with a member of our team. They will reply here shortly."
)
DEFAULT_RESOLUTION_MESSAGE = gettext_noop("Glad I could help! I'm marking this conversation as resolved.")


def customer_text(stored: str, default: str, language: str) -> str:
    """`stored` as a customer of an inbox in `language` reads it: a builder's own text as written, the product's
    default in that language."""
    if stored.strip() != default or not language:
        return stored
    with translation.override(language):
        return gettext(default)


class KnowledgeMode(models.TextChoices):
    INJECT = "inject", "Inject the sources found into every prompt"
    TOOL = "tool", "Only the knowledge_search tool"
    OFF = "off", "No knowledge"


class WhenUnknown(models.TextChoices):
    OFFER = "offer", "Say so and offer a person"
    HANDOFF = "handoff", "Hand over to people"


class Assistant(models.Model):
    """The triage agent of an account's AI team, and the settings its scenarios share."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="assistants")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    product_name = models.CharField(max_length=200, blank=True)
    instructions = models.TextField(blank=True, help_text="Extra instructions for the triage assistant.")
    response_guidelines = models.JSONField(default=list, blank=True, help_text="List of short rules.")
    guardrails = models.JSONField(default=list, blank=True, help_text="List of things the AI must not do.")
    handoff_message = models.TextField(
        default=DEFAULT_HANDOFF_MESSAGE,
        help_text="Sent to the customer when the AI hands the conversation to people.",
    )
    resolution_message = models.TextField(
        default=DEFAULT_RESOLUTION_MESSAGE,
        help_text="Sent when the AI resolves the conversation.",
    )
    model_endpoint = models.CharField(
        max_length=100,
        blank=True,
        help_text="Which model endpoint answers: one the operator offers, or one of the account's own. "
        "Empty: the operator's default endpoint.",
    )
    model = models.CharField(
        max_length=200,
        blank=True,
        help_text="One of the endpoint's models. Empty: the endpoint's first model.",
    )
    temperature = models.FloatField(default=0.2)
    max_turns = models.PositiveSmallIntegerField(
        default=6, help_text="Model calls allowed per customer message."
    )
    knowledge_mode = models.CharField(
        max_length=8,
        choices=KnowledgeMode.choices,
        default=KnowledgeMode.INJECT,
        help_text="inject: the knowledge found for each message is put into the prompt as numbered sources, "
        "and facts about the company come only from them. tool: only the knowledge_search tool the model may "
        "call. off: no knowledge.",
    )
    when_unknown = models.CharField(
        max_length=8,
        choices=WhenUnknown.choices,
        default=WhenUnknown.OFFER,
        help_text="What happens when nothing in the knowledge answers a question about the company: say so and "
        "offer a person, or hand the conversation to people straight away.",
    )
    unknown_message = models.TextField(
        blank=True,
        help_text="Sent when nothing in the knowledge answers the question. Empty: a built-in text in the "
        "customer's language.",
    )
    off_topic_message = models.TextField(
        blank=True,
        help_text="Sent for questions outside the assistant's scope. Empty: a built-in text in the customer's "
        "language.",
    )
    cite_links = models.BooleanField(
        default=False, help_text="Add the link of each cited source that has one to the customer's reply."
    )
    share_contact_details = models.BooleanField(
        default=True,
        help_text="Give the model the contact's name, e-mail and custom attributes. Off: the model sees none of "
        "them (and templates render them empty).",
    )
    suggestions_enabled = models.BooleanField(
        default=False,
        help_text="After each reply, offer the customer up to three follow-up questions as quick-reply buttons.",
    )
    suggestions_persona = models.TextField(
        blank=True,
        help_text="Who writes the follow-up questions and how (e.g. 'short questions a new customer would ask "
        "next'). Empty: a built-in persona.",
    )
    inboxes: "models.ManyToManyField[Inbox, AssistantInbox]" = models.ManyToManyField(
        Inbox, through="AssistantInbox", related_name="+", blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class ModelEndpoint(models.Model):
    """An account's own OpenAI-compatible endpoint: its URL, its key (encrypted at rest, never shown again),
    and the models it serves. The platform's key is never sent here (captain/assistants/services/model_endpoints.py)."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="model_endpoints")
    name = models.CharField(max_length=100, help_text="What assistants and routing refer to it by.")
    base_url = models.URLField(max_length=500, help_text="e.g. https://api.example.com/v1")
    api_key_encrypted = models.TextField(blank=True, editable=False)
    model_names = models.JSONField(
        default=list, blank=True, help_text="Model names assistants may use on it. Empty: any name."
    )
    vision_models = models.JSONField(
        default=list,
        blank=True,
        help_text="Which of its models can see images: customers' photos reach these as image parts.",
    )
    text_tool_models = models.JSONField(
        default=list,
        blank=True,
        help_text="Which of its models cannot return native tool calls: their agents use the text tool "
        "protocol (tools described in the prompt, Thought/action tags). `manage.py captain_probe_tools` "
        "detects it.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["account", "name"], name="model_endpoint_unique_name")]

    def __str__(self) -> str:
        return self.name


class AssistantInbox(models.Model):
    """Which assistant serves an inbox (at most one per inbox); helpdesk stays unaware of captain."""

    assistant = models.ForeignKey(Assistant, on_delete=models.CASCADE, related_name="assistant_inboxes")
    inbox = models.OneToOneField(Inbox, on_delete=models.CASCADE, related_name="captain_assistant")

    class Meta:
        verbose_name_plural = "assistant inboxes"

    def __str__(self) -> str:
        return f"{self.assistant} -> {self.inbox}"

    def clean(self) -> None:
        if self.assistant_id and self.inbox_id and self.assistant.account_id != self.inbox.account_id:
            raise ValidationError("The inbox and the assistant belong to different accounts.")


def validate_scenario_key(value: str) -> None:
    if not SCENARIO_KEY_RE.match(value):
        raise ValidationError("Use lowercase letters, digits and underscores only.")
    if len(value) > MAX_SCENARIO_KEY_LENGTH:
        raise ValidationError(f"At most {MAX_SCENARIO_KEY_LENGTH} characters (handoff_to_<key> <= 64).")
    if value == TRIAGE_KEY:
        raise ValidationError(f"'{TRIAGE_KEY}' is reserved for the triage assistant.")


class ScenarioMode(models.TextChoices):
    TOOLS = "tools", "Tools (answer after tool calls)"
    PLANNING = "planning", "Planning (todo list, confirmation, summary)"


class Scenario(models.Model):
    """A specialist agent. Its `key` is stored once at creation and never re-derived from the title, so renaming
    a scenario never changes the handoff tool a prompt or a conversation refers to."""

    assistant = models.ForeignKey(Assistant, on_delete=models.CASCADE, related_name="scenarios")
    title = models.CharField(max_length=200)
    description = models.TextField(
        help_text="When the assistant should hand the conversation to this scenario."
    )
    instruction = models.TextField(help_text="How this specialist handles the conversation.")
    enabled = models.BooleanField(default=True)
    tools = models.JSONField(
        default=list,
        blank=True,
        help_text="Names of the tools this scenario may call: built-in tools and the account's custom tools.",
    )
    mode = models.CharField(
        max_length=16,
        choices=ScenarioMode.choices,
        default=ScenarioMode.TOOLS,
        help_text="Tools: the agent calls tools and answers. Planning: it keeps a todo list for multi-step "
        "work, pauses for the customer's confirmation or data, and ends with a complete answer.",
    )
    max_tool_calls = models.PositiveSmallIntegerField(
        default=10, help_text="Planning mode: tool calls per customer message at most."
    )
    key = models.CharField(max_length=MAX_SCENARIO_KEY_LENGTH, validators=[validate_scenario_key])
    model_endpoint = models.CharField(
        max_length=100, blank=True, help_text="Empty: the assistant's endpoint."
    )
    model = models.CharField(
        max_length=200,
        blank=True,
        help_text="A model this specialist answers with instead of the assistant's (one the endpoint offers). "
        "Empty: the assistant's model.",
    )
    temperature = models.FloatField(null=True, blank=True, help_text="Empty: the assistant's temperature.")
    handoff_team = models.ForeignKey(
        "helpdesk.Team",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The team whose people pick up this scenario's escalations (assigned round-robin). Empty: the "
        "routing node's team, else nobody in particular.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["assistant", "key"], name="scenario_unique_key_per_assistant"),
            models.CheckConstraint(
                condition=~Q(key=TRIAGE_KEY) & ~Q(key=""), name="scenario_key_not_reserved"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.title} ({self.key})"

    @property
    def handoff_tool_name(self) -> str:
        return f"{HANDOFF_PREFIX}{self.key}"
