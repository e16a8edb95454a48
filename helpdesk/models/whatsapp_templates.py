"""WhatsApp message templates: the only messages Meta delivers outside the 24-hour customer-service window.
A template is approved by Meta per business account; ours mirrors it per WhatsApp inbox (entered in the admin
or synced from the Cloud API by helpdesk.services.whatsapp_templates) so an agent can pick one and fill its
{{1}}..{{n}} variables."""

import re
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _

from .inbox import Inbox

VARIABLE = re.compile(r"\{\{\s*(\d+)\s*\}\}")


def variable_count(body: str) -> int:
    """How many variables a body holds; Meta numbers them 1..n without gaps, so a gap is an error."""
    numbers = sorted({int(number) for number in VARIABLE.findall(body)})
    if numbers != list(range(1, len(numbers) + 1)):
        raise ValidationError(_("Template variables must be numbered {{1}} to {{n}} without gaps."))
    return len(numbers)


class WhatsAppTemplate(models.Model):
    class Status(models.TextChoices):
        APPROVED = "approved", _("Approved")
        PENDING = "pending", _("Pending")
        REJECTED = "rejected", _("Rejected")

    inbox = models.ForeignKey(Inbox, on_delete=models.CASCADE, related_name="whatsapp_templates")
    name = models.CharField(max_length=512)
    language = models.CharField(max_length=16, help_text="Meta's language code, e.g. en_US or zh_CN.")
    category = models.CharField(max_length=32, blank=True, help_text="MARKETING, UTILITY or AUTHENTICATION.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.APPROVED)
    header_text = models.CharField(max_length=60, blank=True)
    body = models.TextField(max_length=1024, help_text="The body text, variables written {{1}}, {{2}} ...")
    variables = models.PositiveSmallIntegerField(default=0, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "WhatsApp template"
        constraints = [
            models.UniqueConstraint(
                fields=["inbox", "name", "language"], name="wa_template_unique_name_language"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.language})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        # The count follows the body however it was saved (admin, sync, shell): a wrong count sends a wrong form.
        self.variables = variable_count(self.body)
        super().save(*args, **kwargs)

    def clean(self) -> None:
        if self.inbox_id and self.inbox.channel_type != Inbox.ChannelType.WHATSAPP:
            raise ValidationError({"inbox": _("Templates belong to a WhatsApp inbox.")})
        self.variables = variable_count(self.body)

    @property
    def variable_numbers(self) -> range:
        """1..n, for a form with one field per variable."""
        return range(1, self.variables + 1)

    def filled(self, values: list[str]) -> str:
        """The body with {{i}} replaced by values[i-1] (the text the agent and the history read)."""
        return VARIABLE.sub(lambda match: values[int(match.group(1)) - 1], self.body)


class WhatsAppTemplateSend(models.Model):
    """The template an outgoing message was sent as: the message's content is the filled body (what people read),
    this is what the WhatsApp channel sends (Meta's template message). Name and language are copied, so a
    template renamed or deleted later does not change what the delivery sends."""

    message = models.OneToOneField(
        "helpdesk.Message", on_delete=models.CASCADE, related_name="whatsapp_template_send"
    )
    template = models.ForeignKey(WhatsAppTemplate, null=True, on_delete=models.SET_NULL, related_name="+")
    name = models.CharField(max_length=512)
    language = models.CharField(max_length=16)
    values = models.JSONField(default=list, blank=True)

    def __str__(self) -> str:
        return f"{self.name} ({self.language})"
