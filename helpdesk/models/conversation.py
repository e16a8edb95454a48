from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from .account import Account
from .contact import Contact, ContactInbox
from .inbox import Inbox


class Label(models.Model):
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="labels")
    name = models.SlugField(max_length=64, allow_unicode=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["account", "name"], name="label_unique_name")]

    def __str__(self) -> str:
        return self.name


class Conversation(models.Model):
    """A thread between a contact and the account on one inbox."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending (AI is handling it)")
        OPEN = "open", _("Open (people handle it)")
        RESOLVED = "resolved", _("Resolved")
        SNOOZED = "snoozed", _("Snoozed")

    class ResolvedBy(models.TextChoices):
        AI = "ai", _("The AI")
        AGENT = "agent", _("People")
        INACTIVITY = "inactivity", _("No answer from the customer")

    class Priority(models.TextChoices):
        NONE = "none", _("None")
        LOW = "low", _("Low")
        MEDIUM = "medium", _("Medium")
        HIGH = "high", _("High")
        URGENT = "urgent", _("Urgent")

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="conversations")
    inbox = models.ForeignKey(Inbox, on_delete=models.CASCADE, related_name="conversations")
    contact = models.ForeignKey(Contact, on_delete=models.CASCADE, related_name="conversations")
    contact_inbox = models.ForeignKey(ContactInbox, on_delete=models.CASCADE, related_name="conversations")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    priority = models.CharField(max_length=16, choices=Priority.choices, default=Priority.NONE)
    labels = models.ManyToManyField(Label, blank=True, related_name="conversations")
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Key of the AI agent in charge (triage or a scenario); the next customer message starts there.
    ai_agent_key = models.CharField(max_length=64, blank=True)
    # Since when the customer has waited for an answer from people (set on escalation, cleared on reply).
    waiting_since = models.DateTimeField(null=True, blank=True)
    escalation_reason = models.TextField(blank=True)
    # A person took the conversation (took it over from the AI, or a person assigned it): while somebody holds it,
    # it is theirs and leaves "Needs people". Cleared when the AI has it again or hands it to the team anew.
    taken_at = models.DateTimeField(
        null=True, blank=True, help_text="When a person last took the conversation (not round-robin)."
    )
    # Typed values for the account's conversation attribute definitions (helpdesk.models.attributes), by key.
    custom_attributes = models.JSONField(default=dict, blank=True)
    subject = models.CharField(max_length=255, blank=True, help_text="E-mail: the subject of the first mail.")
    # The team whose people pick up this conversation's escalations (helpdesk.models.team).
    team = models.ForeignKey(
        "helpdesk.Team", null=True, blank=True, on_delete=models.SET_NULL, related_name="conversations"
    )
    snoozed_until = models.DateTimeField(
        null=True, blank=True, help_text="Snoozed: woken at this time or by the customer's next message."
    )
    # Reporting facts, written once by the services that change them (helpdesk.selectors.reports reads them).
    first_reply_at = models.DateTimeField(
        null=True, blank=True, help_text="First public answer to the customer (AI or people)."
    )
    escalated_at = models.DateTimeField(
        null=True, blank=True, help_text="First time the conversation was handed to people."
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.CharField(max_length=16, choices=ResolvedBy.choices, blank=True)
    csat_requested_at = models.DateTimeField(null=True, blank=True)
    away_replied_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the customer was last told that people are away (business hours): once per closed period.",
    )
    last_activity_at = models.DateTimeField(auto_now_add=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["account", "status", "last_activity_at"], name="conv_account_status_idx"),
            models.Index(fields=["contact_inbox", "status"], name="conv_contact_inbox_status_idx"),
            # The dashboard's "needs people" and "unassigned" lists: oldest waiting customer first.
            models.Index(fields=["account", "status", "waiting_since"], name="conv_account_waiting_idx"),
            # The auto-resolve and snooze sweeps scan every account by status and time.
            models.Index(fields=["status", "last_activity_at"], name="conv_status_activity_idx"),
            models.Index(fields=["status", "snoozed_until"], name="conv_status_snoozed_idx"),
            models.Index(fields=["account", "created_at"], name="conv_account_created_idx"),
        ]

    def __str__(self) -> str:
        return f"Conversation #{self.pk} ({self.status})"
