from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from .account import Account


class AuditEntry(models.Model):
    """One configuration change: who made it, where (admin, dashboard, API), to which row, and the before/after
    of its fields. Secret fields are recorded as changed, never with a value (helpdesk.services.audit)."""

    class Action(models.TextChoices):
        # A context: "Created" elsewhere is a column of dates.
        CREATED = "created", pgettext_lazy("audit action", "Created")
        UPDATED = "updated", pgettext_lazy("audit action", "Updated")
        DELETED = "deleted", pgettext_lazy("audit action", "Deleted")

    class Source(models.TextChoices):
        ADMIN = "admin", _("Django admin")
        DASHBOARD = "dashboard", _("Dashboard")
        API = "api", _("API")
        SYSTEM = "system", _("System")

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    # Null when the change had no signed-in person (a task, a command) or the person was deleted since:
    # `actor_name` keeps who it was.
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_name = models.CharField(max_length=150, blank=True)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.SYSTEM)
    action = models.CharField(max_length=16, choices=Action.choices)
    # "app_label.modelname": the captain models are registered by name, helpdesk never imports them.
    model = models.CharField(max_length=100)
    object_id = models.CharField(max_length=64)
    object_repr = models.CharField(max_length=200, blank=True)
    # {field: [before, after]}; a secret's pair is ["changed", "changed"] (helpdesk.services.audit.SECRET_MARK).
    changes = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        verbose_name_plural = "audit entries"
        indexes = [models.Index(fields=["account", "-created_at"], name="audit_account_time_idx")]

    def __str__(self) -> str:
        return f"{self.action} {self.model} {self.object_id}"
