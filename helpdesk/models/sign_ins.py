from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class SignInEvent(models.Model):
    """One sign-in to the dashboard or the admin, or one refused attempt: when, from where, and how it ended.

    A person reads their own on their security page ("was that me?"); an account's administrators read their
    members'. Kept `SIGN_IN_RETENTION_DAYS` (helpdesk.services.sign_ins)."""

    class Outcome(models.TextChoices):
        SIGNED_IN = "signed_in", _("Signed in")
        SIGNED_IN_TWO_FACTOR = "signed_in_2fa", _("Signed in with a two-factor code")
        WRONG_PASSWORD = "wrong_password", _("Wrong username or password")
        WRONG_CODE = "wrong_code", _("Wrong two-factor code")
        LOCKED_OUT = "locked_out", _("Locked: too many failed attempts")

    # Null for a username that matches nobody: the attempt is still kept, under what was typed.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    username = models.CharField(max_length=150, blank=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    ip_address = models.GenericIPAddressField(null=True, blank=True)
    user_agent = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        indexes = [models.Index(fields=["user", "-created_at"], name="signin_user_recent")]

    def __str__(self) -> str:
        return f"{self.username} {self.outcome} {self.created_at:%Y-%m-%d %H:%M}"

    @property
    def succeeded(self) -> bool:
        return self.outcome in (self.Outcome.SIGNED_IN, self.Outcome.SIGNED_IN_TWO_FACTOR)
