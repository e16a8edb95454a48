from django.core.validators import RegexValidator
from django.db import models

from .account import Account

ATTRIBUTE_KEY_RE = r"^[a-z][a-z0-9_]{0,63}$"


class CustomAttributeDefinition(models.Model):
    """A typed key/value the team tracks on its contacts or conversations (plan, city, order number...).

    Values live in `Contact.custom_attributes` / `Conversation.custom_attributes` by key; a value is accepted
    only for a defined key and only of its kind (helpdesk.services.attributes validates both).
    """

    class AppliesTo(models.TextChoices):
        CONTACT = "contact", "Contacts"
        CONVERSATION = "conversation", "Conversations"

    class Kind(models.TextChoices):
        TEXT = "text", "Text"
        NUMBER = "number", "Number"
        BOOLEAN = "boolean", "Yes / no"
        DATE = "date", "Date"
        LIST = "list", "One of a list"

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="attribute_definitions")
    applies_to = models.CharField(max_length=16, choices=AppliesTo.choices)
    key = models.CharField(
        max_length=64,
        validators=[
            RegexValidator(ATTRIBUTE_KEY_RE, "Lowercase letters, digits and _, starting with a letter.")
        ],
    )
    label = models.CharField(max_length=200)
    description = models.CharField(max_length=500, blank=True)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.TEXT)
    choices = models.JSONField(default=list, blank=True, help_text="The allowed values of a list attribute.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["applies_to", "key"]
        constraints = [
            models.UniqueConstraint(fields=["account", "applies_to", "key"], name="attribute_unique_key")
        ]

    def __str__(self) -> str:
        return f"{self.applies_to}.{self.key}"
