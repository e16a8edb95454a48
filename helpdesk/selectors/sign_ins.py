"""Reads for sign-in security: whether a person has two-factor sign-in on, their sign-in history, and the
account's members with both (the administrators' security page)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Max
from django_otp.plugins.otp_static.models import StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from helpdesk.models import Membership, SignInEvent

HISTORY_LIMIT = 50


def two_factor_enabled(*, user: Any) -> bool:
    return TOTPDevice.objects.filter(user=user, confirmed=True).exists()


def backup_codes_left(*, user: Any) -> int:
    return StaticToken.objects.filter(device__user=user, device__confirmed=True).count()


def two_factor_user_ids(*, account_id: int) -> set[int]:
    """The account's members who have two-factor sign-in on (one query)."""
    members = Membership.objects.filter(account_id=account_id).values("user_id")
    return set(
        TOTPDevice.objects.filter(user_id__in=members, confirmed=True).values_list("user_id", flat=True)
    )


def sign_ins_for(*, user_id: int, limit: int = HISTORY_LIMIT) -> list[SignInEvent]:
    """The person's newest sign-ins and refused attempts, newest first."""
    return list(SignInEvent.objects.filter(user_id=user_id).order_by("-created_at", "-id")[:limit])


@dataclass(frozen=True)
class MemberSecurity:
    membership: Membership
    two_factor: bool
    last_sign_in: Any  # datetime | None


def member_security(*, account_id: int) -> list[MemberSecurity]:
    """Each member of the account with their two-factor state and last successful sign-in (three queries)."""
    memberships = list(
        Membership.objects.filter(account_id=account_id).select_related("user").order_by("user__username")
    )
    user_ids = [m.user_id for m in memberships]
    with_totp = two_factor_user_ids(account_id=account_id)
    succeeded = (SignInEvent.Outcome.SIGNED_IN, SignInEvent.Outcome.SIGNED_IN_TWO_FACTOR)
    last = dict(
        SignInEvent.objects.filter(user_id__in=user_ids, outcome__in=succeeded)
        .values("user_id")
        .annotate(at=Max("created_at"))
        .values_list("user_id", "at")
    )
    return [MemberSecurity(m, m.user_id in with_totp, last.get(m.user_id)) for m in memberships]


def account_member_for_history(*, account_id: int, user_id: int) -> Membership | None:
    """A member of this account (an administrator reads only their own account's people's history)."""
    return Membership.objects.filter(account_id=account_id, user_id=user_id).select_related("user").first()


def active_user(*, user_id: int) -> Any:
    """The active user of a half-finished sign-in (None when deleted or deactivated meanwhile)."""
    return get_user_model()._default_manager.filter(pk=user_id, is_active=True).first()


def two_factor_required(*, user: Any) -> bool:
    """Whether any account the person belongs to requires two-factor sign-in."""
    return Membership.objects.filter(user=user, account__require_two_factor=True).exists()
