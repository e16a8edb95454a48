import zoneinfo

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models


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
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    """A user's role in one account. A user may belong to several accounts."""

    class Role(models.TextChoices):
        ADMIN = "admin", "Administrator"
        AGENT = "agent", "Agent"

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.AGENT)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["account", "user"], name="membership_unique_account_user")
        ]

    def __str__(self) -> str:
        return f"{self.user} @ {self.account} ({self.role})"
