from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from .message import Message


class Delivery(models.Model):
    """The outbox record of one outgoing message: whether it reached the customer's channel, and the state the
    delivery task and the outbox sweeper share (helpdesk/delivery/). Private notes and activities have none."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        SENT = "sent", _("Sent")
        FAILED = "failed", _("Failed")

    message = models.OneToOneField(
        Message, on_delete=models.CASCADE, primary_key=True, related_name="delivery"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    # When the delivery task was last published (or, for a retry, when it is due). Null after commit means the
    # publish failed: the outbox sweeper re-enqueues such rows.
    enqueued_at = models.DateTimeField(null=True, blank=True)
    # A delivery task is sending until then; another task for the same row waits instead of sending twice.
    lease_until = models.DateTimeField(null=True, blank=True)
    # The provider's ids for what we sent, one per part (comma-separated), for status webhooks and resuming.
    provider_message_id = models.CharField(max_length=255, blank=True)
    # The message's own creation time (not auto_now_add, so the data migration can carry it): the sweeper's
    # "published yet?" grace period counts from it.
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "deliveries"
        indexes = [models.Index(fields=["status", "created_at"], name="delivery_status_idx")]

    def __str__(self) -> str:
        return f"delivery of message {self.message_id}: {self.status}"
