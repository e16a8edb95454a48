"""Reads for invitations and the account's People page (helpdesk.services.invitations writes them)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import QuerySet

from helpdesk.models import Invitation, Membership
from helpdesk.models.invitations import token_hash


def invitation_for_token(*, token: str) -> Invitation | None:
    """The invitation a link's token opens, whatever its state; None for a token nobody was sent."""
    return Invitation.objects.filter(token_hash=token_hash(token)).select_related("account").first()


def account_invitation(*, account_id: int, invitation_id: int) -> Invitation | None:
    """One invitation of the account (another account's: None, never revealed)."""
    return Invitation.objects.filter(account_id=account_id, pk=invitation_id).first()


def pending_invitations(*, account_id: int) -> QuerySet[Invitation]:
    """Invitations neither accepted nor revoked, newest first (expired ones too: the page says so)."""
    return (
        Invitation.objects.filter(account_id=account_id, accepted_at__isnull=True, revoked_at__isnull=True)
        .select_related("invited_by")
        .order_by("-created_at", "-id")
    )


def account_people(*, account_id: int) -> QuerySet[Membership]:
    """The account's memberships with their users: administrators first, then by username."""
    return (
        Membership.objects.filter(account_id=account_id)
        .select_related("user")
        .order_by("role", "user__username", "id")
    )


def user_with_email(*, email: str) -> Any | None:
    """The (oldest) active user whose e-mail is `email`, compared without case; None when there is none."""
    return get_user_model().objects.filter(email__iexact=email.strip(), is_active=True).order_by("id").first()


def is_account_member_email(*, account_id: int, email: str) -> bool:
    """Whether someone with this e-mail address is already a member of the account."""
    return Membership.objects.filter(account_id=account_id, user__email__iexact=email.strip()).exists()


def account_invitations(*, account_id: int) -> QuerySet[Invitation]:
    """Every invitation of the account (pending, expired, accepted, withdrawn), newest first."""
    return Invitation.objects.filter(account_id=account_id).order_by("-created_at", "-id")
