import secrets
import uuid

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from ..crypto import secret_decrypt, secret_encrypt
from .account import Account


class WebhookEvent(models.TextChoices):
    """What an integration can subscribe to (helpdesk.services.event_webhooks says when each is sent)."""

    CONVERSATION_CREATED = "conversation_created", _("Conversation created")
    CONVERSATION_UPDATED = "conversation_updated", _("Conversation updated")
    CONVERSATION_RESOLVED = "conversation_resolved", _("Conversation resolved")
    MESSAGE_CREATED = "message_created", _("Message created")
    HANDOFF = "handoff", _("Handed to people")
    CSAT = "csat", _("Satisfaction rating")


def new_webhook_secret() -> str:
    return secrets.token_hex(32)


class WebhookEndpoint(models.Model):
    """An account's integration URL that receives signed events (the API channel's signature scheme)."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="webhook_endpoints")
    name = models.CharField(max_length=100)
    url = models.URLField(max_length=500, help_text=_("Where the signed events are POSTed (https)."))
    # The HMAC secret, a Fernet token (helpdesk.crypto): shown once when made, never again.
    secret_encrypted = models.TextField(editable=False)
    events = models.JSONField(default=list, help_text=_("The events sent to this URL."))
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["account", "name"], name="webhook_endpoint_unique_name")
        ]

    def __str__(self) -> str:
        return self.name

    def secret_set(self, secret: str) -> None:
        self.secret_encrypted = secret_encrypt(secret)

    def secret(self) -> str:
        """The signing secret (raises helpdesk.crypto.SecretUnreadable when the keys cannot read it)."""
        return secret_decrypt(self.secret_encrypted)


class WebhookDelivery(models.Model):
    """The outbox row and delivery log of one event for one endpoint: the worker's lease and retry state, and
    what the last attempt got (status code, error, duration). A replay is a new row with the same event id."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        SENT = "sent", _("Sent")
        FAILED = "failed", _("Failed")

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=32, choices=WebhookEvent.choices)
    # Sent as X-Helpdesk-Event-Id: the receiver's key to drop a retry or replay it already handled.
    event_id = models.UUIDField(default=uuid.uuid4)
    payload = models.JSONField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    # When the task was last published or, for a retry, when it is due; null after commit: never published.
    enqueued_at = models.DateTimeField(null=True, blank=True)
    # An attempt is under way until then; another task for the row waits instead of sending twice.
    lease_until = models.DateTimeField(null=True, blank=True)
    replay_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "webhook deliveries"
        indexes = [
            models.Index(fields=["status", "enqueued_at"], name="webhook_delivery_status_idx"),
            models.Index(fields=["account", "-created_at"], name="webhook_delivery_account_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.event} to {self.endpoint_id}: {self.status}"
