from django.conf import settings
from django.db import models

from .account import Account
from .inbox import Inbox


class Contact(models.Model):
    """A customer of the account."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="contacts")
    name = models.CharField(max_length=200, blank=True)
    email = models.EmailField(blank=True)
    phone = models.CharField(
        max_length=31, blank=True, help_text="Digits, spaces and + ( ) . / - (checked on edit)."
    )
    # Typed values for the account's contact attribute definitions (helpdesk.models.attributes), by key.
    custom_attributes = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name or self.email or f"Contact #{self.pk}"


class ContactInbox(models.Model):
    """How a contact is known on one inbox: the channel's own id for them (chat id, phone, sender id)."""

    contact = models.ForeignKey(Contact, on_delete=models.CASCADE, related_name="contact_inboxes")
    inbox = models.ForeignKey(Inbox, on_delete=models.CASCADE, related_name="contact_inboxes")
    source_id = models.CharField(max_length=255)

    class Meta:
        verbose_name_plural = "contact inboxes"
        constraints = [
            models.UniqueConstraint(fields=["inbox", "source_id"], name="contact_inbox_unique_source")
        ]

    def __str__(self) -> str:
        return f"{self.contact} on {self.inbox}"


class ContactNote(models.Model):
    """A note about a customer for the team (never seen by the customer), on the contact's page."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    contact = models.ForeignKey(Contact, on_delete=models.CASCADE, related_name="notes")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    content = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["contact", "-id"], name="contact_note_contact_idx")]

    def __str__(self) -> str:
        return f"Note on {self.contact_id}: {self.content[:40]}"
