"""Invitations: an administrator invites an address with a role, the mail's one-time link makes a new person (name
and password) or lets an existing user join, and every link that no longer works (used, expired, withdrawn,
replaced, unknown) is refused with a clear page and changes nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import IntegrityError
from django.utils import timezone

from helpdesk.models import Invitation


def test_an_address_has_one_open_invitation_per_account(team):
    later = timezone.now() + timedelta(days=7)
    Invitation.objects.create(
        account=team.account, email="dana@example.com", token_hash="a" * 64, expires_at=later
    )
    Invitation.objects.create(
        account=team.account,
        email="dana@example.com",
        token_hash="b" * 64,
        expires_at=later,
        revoked_at=timezone.now(),  # a withdrawn one does not count
    )

    with pytest.raises(IntegrityError):
        Invitation.objects.create(
            account=team.account, email="dana@example.com", token_hash="c" * 64, expires_at=later
        )
