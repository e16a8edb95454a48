"""Invitations to join an account by e-mail (helpdesk.services.invitations writes them).

The link's token is shown once, in the mail; only its SHA-256 is stored, so a database dump or a backup cannot
be turned into a way in. An address has at most one open invitation per account (a partial unique constraint):
inviting it again replaces the old link, which then stops working.
"""

import hashlib
from datetime import datetime

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from .account import Account, Membership


def token_hash(token: str) -> str:
    """What is stored of a link's token (hex SHA-256): enough to find the invitation, useless to sign up with."""
    return hashlib.sha256(token.encode()).hexdigest()


class Invitation(models.Model):
    class State(models.TextChoices):
        PENDING = "pending", _("Pending")
        EXPIRED = "expired", _("Expired")
        ACCEPTED = "accepted", _("Accepted")
        REVOKED = "revoked", _("Revoked")

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField(help_text="Lower-cased: one person, one open invitation per account.")
    role = models.CharField(max_length=16, choices=Membership.Role.choices, default=Membership.Role.AGENT)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["account", "email"],
                condition=Q(accepted_at__isnull=True, revoked_at__isnull=True),
                name="invitation_one_open_per_email",
            )
        ]

    def __str__(self) -> str:
        return f"{self.email} → {self.account} ({self.role})"

    def state(self, now: datetime) -> "Invitation.State":
        """Whether the link still works at `now`, and if not why not."""
        if self.accepted_at is not None:
            return self.State.ACCEPTED
        if self.revoked_at is not None:
            return self.State.REVOKED
        if self.expires_at <= now:
            return self.State.EXPIRED
        return self.State.PENDING
