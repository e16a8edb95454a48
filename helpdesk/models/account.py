import zoneinfo

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _


def validate_time_zone(value: str) -> None:
    if value not in zoneinfo.available_timezones():
        raise ValidationError(
            f"'{value}' is not an IANA time zone name such as Europe/Berlin or Asia/Shanghai."
        )


class Account(models.Model):
    """A tenant: one support team with its inboxes, people, assistants and credits."""

    name = models.CharField(max_length=200)
    time_zone = models.CharField(
        max_length=64,
        default="UTC",
        validators=[validate_time_zone],
        help_text="The team's time zone (IANA name): the AI reads the current date and time in it.",
    )
    auto_resolve_ai_after_minutes = models.PositiveIntegerField(
        null=True,
        blank=True,
        default=30,
        help_text="A conversation the AI is handling that has been quiet this long is judged by the model: "
        "resolved, or handed to people. Empty: never.",
    )
    auto_resolve_waiting_after_hours = models.PositiveIntegerField(
        null=True,
        blank=True,
        default=48,
        help_text="A conversation where people answered and the customer has not replied for this long is "
        "resolved. Empty: never.",
    )
    require_two_factor = models.BooleanField(
        default=False,
        help_text="Everyone in the account signs in with a code from an authenticator app; a member without one "
        "is asked to set it up before any page of the account opens.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    """A user's role in one account. A user may belong to several accounts."""

    class Role(models.TextChoices):
        ADMIN = "admin", _("Administrator")
        AGENT = "agent", _("Agent")

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")

    class Availability(models.TextChoices):
        ONLINE = "online", _("Online")
        BUSY = "busy", _("Busy")
        OFFLINE = "offline", _("Offline")

    role = models.CharField(max_length=16, choices=Role.choices, default=Role.AGENT)
    availability = models.CharField(
        max_length=8,
        choices=Availability.choices,
        default=Availability.ONLINE,
        help_text="Only online people get conversations assigned automatically.",
    )
    max_open_assignments = models.PositiveIntegerField(
        null=True,
        blank=True,
        default=10,
        help_text="Automatic assignment stops at this many unresolved conversations. Empty: no limit.",
    )
    email_notifications = models.BooleanField(
        default=True, help_text="Also send this person's notifications by e-mail."
    )
    escalation_notifications = models.BooleanField(
        default=True,
        help_text="Be told when a conversation is handed to people and not assigned to this person (its team's "
        "members, else the administrators, are told).",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["account", "user"], name="membership_unique_account_user")
        ]

    def __str__(self) -> str:
        return f"{self.user} @ {self.account} ({self.role})"
