from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from .account import Account
from .conversation import Conversation


class Notification(models.Model):
    """Something one person should know about (helpdesk.services.notifications): shown in the dashboard's bell,
    pushed live, and e-mailed when the person asked for it."""

    class Kind(models.TextChoices):
        ESCALATION = "escalation", _("A conversation needs people")
        ASSIGNED = "assigned", _("Assigned to you")
        MENTION = "mention", _("Mentioned in a note")
        SLA_BREACH = "sla_breach", _("An SLA target was missed")

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="+")
    text = models.CharField(max_length=300)
    read_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["user", "account", "read_at"], name="notification_unread_idx")]

    def __str__(self) -> str:
        return f"{self.kind} for {self.user}: {self.text[:40]}"
