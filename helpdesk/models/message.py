from django.conf import settings
from django.db import models
from django.db.models import Q

from .account import Account
from .contact import Contact
from .conversation import Conversation
from .inbox import Inbox


class Message(models.Model):
    """One message of a conversation. Outgoing rows are also the delivery outbox."""

    class Type(models.TextChoices):
        INCOMING = "incoming", "Incoming"
        OUTGOING = "outgoing", "Outgoing"
        ACTIVITY = "activity", "Activity"

    class SenderType(models.TextChoices):
        CONTACT = "contact", "Contact"
        USER = "user", "Agent"
        ASSISTANT = "assistant", "AI assistant"
        SYSTEM = "system", "System"

    class DeliveryStatus(models.TextChoices):
        NONE = "none", "Not sent"
        QUEUED = "queued", "Queued"
        SENT = "sent", "Sent"
        FAILED = "failed", "Failed"

    class AIStatus(models.TextChoices):
        """Progress of the AI on an incoming message (the sweeper and the attempt counter use it)."""

        NONE = "none", "Not for the AI"
        PENDING = "pending", "Waiting for the AI"
        DONE = "done", "Answered or handed off"
        SKIPPED = "skipped", "Skipped (people in charge)"

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    inbox = models.ForeignKey(Inbox, on_delete=models.CASCADE, related_name="messages")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages")
    message_type = models.CharField(max_length=16, choices=Type.choices)
    private = models.BooleanField(default=False, help_text="A private note: never sent to the customer.")
    content = models.TextField(blank=True)
    # Links (url, content type, file name, caption) for attachments the channel reported.
    attachments = models.JSONField(default=list, blank=True)
    sender_type = models.CharField(max_length=16, choices=SenderType.choices)
    sender_contact = models.ForeignKey(
        Contact, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    sender_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # For AI replies: which agent of the team wrote it (triage or a scenario key) and its display name.
    ai_agent_key = models.CharField(max_length=64, blank=True)
    ai_agent_name = models.CharField(max_length=200, blank=True)
    # The sender's own id for an incoming message: the dedup key, unique per inbox.
    provider_message_id = models.CharField(max_length=255, null=True, blank=True)
    delivery_status = models.CharField(
        max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.NONE
    )
    delivery_attempts = models.PositiveIntegerField(default=0)
    delivery_error = models.TextField(blank=True)
    # When a delivery task was last published (or, for a retry, when it is due). Null after commit means the
    # publish failed: the outbox sweeper re-enqueues such rows.
    delivery_enqueued_at = models.DateTimeField(null=True, blank=True)
    # A delivery task is sending until then; another task for the same row waits instead of sending twice.
    delivery_lease_until = models.DateTimeField(null=True, blank=True)
    # The provider's id for a message we sent (for status webhooks and edits).
    delivery_provider_id = models.CharField(max_length=255, blank=True)
    ai_status = models.CharField(max_length=16, choices=AIStatus.choices, default=AIStatus.NONE)
    ai_attempts = models.PositiveIntegerField(default=0)
    # When a task for this message was last put on the queue; the sweeper claims stale ones by updating it.
    ai_enqueued_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["inbox", "provider_message_id"],
                condition=Q(provider_message_id__isnull=False),
                name="message_unique_provider_id_per_inbox",
            )
        ]
        indexes = [
            models.Index(fields=["conversation", "created_at"], name="message_conversation_idx"),
            models.Index(fields=["ai_status", "created_at"], name="message_ai_status_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.message_type} #{self.pk}: {self.content[:40]}"

    @property
    def is_public(self) -> bool:
        return not self.private and self.message_type != self.Type.ACTIVITY
