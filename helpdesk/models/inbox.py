import secrets
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from ..crypto import secret_decrypt, secret_encrypt
from .account import Account
from .person import Language

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def new_webhook_token() -> str:
    return secrets.token_urlsafe(24)


def new_secret() -> str:
    return secrets.token_hex(32)


class Inbox(models.Model):
    """A channel through which customers reach the account (the generic API channel, Telegram, ...)."""

    class ChannelType(models.TextChoices):
        API = "api", _("API (signed webhooks)")
        TELEGRAM = "telegram", "Telegram"
        WHATSAPP = "whatsapp", "WhatsApp Cloud"
        SLACK = "slack", "Slack"
        WIDGET = "widget", _("Website chat widget")
        EMAIL = "email", _("E-mail")

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="inboxes")
    name = models.CharField(max_length=200)
    channel_type = models.CharField(max_length=16, choices=ChannelType.choices, default=ChannelType.API)
    # Public, unguessable path segment of the webhook URL; it identifies the inbox, the secret authenticates.
    webhook_token = models.CharField(max_length=64, unique=True, default=new_webhook_token, editable=False)
    # Shared HMAC secret (API channel) or provider secret. Write-only in the admin and API.
    secret = models.CharField(max_length=200, default=new_secret)
    callback_url = models.URLField(blank=True, help_text="API channel: where signed reply events are POSTed.")
    # Provider channels: the token used to send (Telegram bot token, WhatsApp access token, Slack bot token).
    # Write-only in the admin and API, like `secret`.
    access_token = models.CharField(max_length=500, blank=True)
    # E-mail inboxes: the SMTP and IMAP passwords, Fernet tokens (helpdesk.crypto), never the passwords
    # themselves; set and read through the methods below, write-only in the admin.
    smtp_password_encrypted = models.TextField(blank=True, default="", editable=False)
    imap_password_encrypted = models.TextField(blank=True, default="", editable=False)
    # Non-secret provider settings: phone_number_id, verify_token, bot_user_id, api_base_url (tests point it at a
    # fake provider on 127.0.0.1) ...; each channel module documents the keys it reads.
    provider_config = models.JSONField(default=dict, blank=True)
    webhook_rate_limit_per_minute = models.PositiveIntegerField(
        null=True, blank=True, help_text="Webhook requests accepted per minute (empty: the server default)."
    )
    greeting_message = models.TextField(blank=True)
    handoff_message = models.TextField(
        blank=True, help_text="Sent to the customer when the conversation is handed to people."
    )

    class AfterResolution(models.TextChoices):
        NEW = "new", _("Start a new conversation")
        REOPEN = "reopen", _("Reopen the last conversation")

    after_resolution = models.CharField(
        max_length=8,
        choices=AfterResolution.choices,
        default=AfterResolution.NEW,
        help_text="When a customer writes after their conversation was resolved: start a new conversation, or "
        "reopen the resolved one (one conversation per customer on this inbox).",
    )
    csat_survey_enabled = models.BooleanField(
        default=False,
        help_text="After a conversation is resolved, ask the customer to rate it (1-5) in this channel.",
    )
    csat_message = models.TextField(
        blank=True,
        help_text="The rating question. Empty: a built-in text.",
    )
    language = models.CharField(
        max_length=16,
        choices=Language.choices,
        default=Language.ENGLISH,
        help_text="The language of the built-in texts customers of this inbox read (the rating question, the "
        "handoff message) when no own text is set.",
    )
    auto_assign = models.BooleanField(
        default=False,
        help_text="Give each conversation that needs a person (a new one on an inbox without AI, or an AI handoff "
        "to no team) to the next of this inbox's members, round-robin, among those online and under their "
        "maximum of open conversations (set per person on their account membership). Needs members.",
    )
    sla_policy = models.ForeignKey(
        "helpdesk.SlaPolicy",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="inboxes",
        help_text="The service-level targets for people's work on this inbox's conversations.",
    )
    # The through model is named by a string, so the plugin cannot infer the field's types: spelled out here.
    members: "models.ManyToManyField[User, InboxMember]" = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="InboxMember", related_name="support_inboxes", blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "inboxes"

    def __str__(self) -> str:
        return f"{self.name} ({self.get_channel_type_display()})"

    def smtp_password_set(self, password: str) -> None:
        self.smtp_password_encrypted = secret_encrypt(password)

    def imap_password_set(self, password: str) -> None:
        self.imap_password_encrypted = secret_encrypt(password)

    def smtp_password(self) -> str:
        """The SMTP password (raises helpdesk.crypto.SecretUnreadable when the configured keys cannot read it)."""
        return secret_decrypt(self.smtp_password_encrypted)

    def imap_password(self) -> str:
        """The IMAP password; none set: the SMTP password (most providers have one password per mailbox)."""
        return secret_decrypt(self.imap_password_encrypted or self.smtp_password_encrypted)


class InboxMember(models.Model):
    """A person of the inbox's account who looks after it: told of its escalations that no team picks up
    (helpdesk.services.notifications), given its conversations when it auto-assigns. Once an inbox has members,
    agents who are not among them no longer see its conversations (administrators see all; an inbox with no
    members stays open to every agent: helpdesk.selectors.visibility). Set through
    helpdesk.services.inbox_members, which refuses anyone who is not a member of the inbox's account."""

    inbox = models.ForeignKey(Inbox, on_delete=models.CASCADE, related_name="inbox_members")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    # Round-robin place for the inbox's auto-assignment (helpdesk.services.assignment), as TeamMember's.
    last_assigned_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["inbox", "user"], name="inbox_member_unique")]

    def __str__(self) -> str:
        return f"{self.user} in {self.inbox}"
