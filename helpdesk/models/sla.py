"""Service-level targets for people's work (helpdesk.selectors.sla computes the due times, helpdesk.services.sla
marks breaches): how soon people answer a conversation handed to them, answer each later customer message, and
resolve it. A policy applies to the inboxes that name it; the AI's own work has no SLA."""

from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _

from .account import Account
from .conversation import Conversation


class SlaPolicy(models.Model):
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="sla_policies")
    name = models.CharField(max_length=100)
    first_response_minutes = models.PositiveIntegerField(
        null=True, blank=True, help_text="People's first reply after the conversation is handed to them."
    )
    next_response_minutes = models.PositiveIntegerField(
        null=True, blank=True, help_text="People's reply to each later customer message."
    )
    resolution_minutes = models.PositiveIntegerField(
        null=True, blank=True, help_text="Resolved, counted from when the conversation was handed to people."
    )
    business_hours_only = models.BooleanField(
        default=True,
        help_text="Count only the inbox's business hours (an inbox without hours counts every minute).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "SLA policy"
        verbose_name_plural = "SLA policies"
        constraints = [models.UniqueConstraint(fields=["account", "name"], name="sla_policy_unique_name")]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        targets = (self.first_response_minutes, self.next_response_minutes, self.resolution_minutes)
        if all(target is None for target in targets):
            raise ValidationError(_("Set at least one target."))


class SlaBreach(models.Model):
    """A target missed, recorded once per due time (its unique constraint: two sweeps never record it twice)."""

    class Kind(models.TextChoices):
        FIRST_RESPONSE = "first_response", _("First response")
        NEXT_RESPONSE = "next_response", _("Next response")
        RESOLUTION = "resolution", _("Resolution")

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="sla_breaches")
    policy = models.ForeignKey(SlaPolicy, null=True, on_delete=models.SET_NULL, related_name="breaches")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    due_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "SLA breach"
        verbose_name_plural = "SLA breaches"
        constraints = [
            models.UniqueConstraint(fields=["conversation", "kind", "due_at"], name="sla_breach_once_per_due")
        ]
        indexes = [models.Index(fields=["account", "created_at"], name="sla_breach_account_created")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} missed on #{self.conversation_id}"
