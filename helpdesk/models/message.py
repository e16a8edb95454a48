from django.conf import settings
from django.db import models
from django.db.models import Q

from .account import Account
from .contact import Contact
from .conversation import Conversation
from .inbox import Inbox


class Message(models.Model):
    """One message of a conversation. An outgoing public one has a `Delivery` (helpdesk/delivery/); the AI's
    work on a customer message is captain's (its own job table), not this row's."""

    class Type(models.TextChoices):
        INCOMING = "incoming", "Incoming"
        OUTGOING = "outgoing", "Outgoing"
        ACTIVITY = "activity", "Activity"

    class SenderType(models.TextChoices):
        CONTACT = "contact", "Contact"
        USER = "user", "Agent"
        ASSISTANT = "assistant", "AI assistant"
        SYSTEM = "system", "System"

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    inbox = models.ForeignKey(Inbox, on_delete=models.CASCADE, related_name="messages")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages")
    message_type = models.CharField(max_length=16, choices=Type.choices)
    private = models.BooleanField(default=False, help_text="A private note: never sent to the customer.")
    content = models.TextField(blank=True)
    # Links (url, content type, file name, caption) for attachments the channel reported.
    attachments = models.JSONField(default=list, blank=True)
    # Outgoing only: follow-up questions offered with the message as the channel's quick-reply buttons; a tap
    # comes back as an ordinary incoming message.
    quick_replies = models.JSONField(default=list, blank=True)
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
        ]

    def __str__(self) -> str:
        return f"{self.message_type} #{self.pk}: {self.content[:40]}"

    @property
    def is_public(self) -> bool:
        return not self.private and self.message_type != self.Type.ACTIVITY
