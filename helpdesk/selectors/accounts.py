"""Reads about accounts and the people in them; `access_membership` fetches and authorizes in one call."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404

from helpdesk.models import Account, Label, Membership


def accounts_for_user(user: Any) -> list[Account]:
    return list(Account.objects.filter(memberships__user=user).order_by("id"))


def account_switcher_accounts(*, user: Any) -> list[Account]:
    """The accounts the page frame offers to switch to, by name (one query)."""
    return list(Account.objects.filter(memberships__user=user).order_by("name", "id"))


def membership_for(*, user: Any, account_id: int) -> Membership | None:
    return Membership.objects.filter(user=user, account_id=account_id).select_related("account").first()


def membership_with_user(*, user_id: int, account_id: int) -> Membership | None:
    """The membership and its user in one query (an open stream's re-check, helpdesk.views.events)."""
    return Membership.objects.filter(user_id=user_id, account_id=account_id).select_related("user").first()


class TwoFactorRequired(PermissionDenied):
    """The account requires two-factor sign-in and this session has not passed it (the dashboard sends the
    person to set it up or enter a code; the API answers 403)."""


def session_verified(user: Any) -> bool:
    """Whether the signed-in session passed two-factor sign-in. A session's user carries django-otp's
    `is_verified` (its middleware); a user resolved from an API token has none: tokens are their own credential,
    made by someone signed in, and are not asked for a code."""
    is_verified = getattr(user, "is_verified", None)
    return True if is_verified is None else bool(is_verified())


def access_membership(*, user: Any, account_id: int) -> Membership:
    """The caller's membership in the account; 404 when there is none (never reveal the account exists), 403
    (`TwoFactorRequired`) when the account requires two-factor sign-in and the session has not passed it."""
    membership = membership_for(user=user, account_id=account_id) if user.is_authenticated else None
    if membership is None:
        raise Http404("No such account.")
    if membership.account.require_two_factor and not session_verified(user):
        raise TwoFactorRequired("This account requires two-factor sign-in.")
    return membership


def landing_membership(*, user: Any, last_account_id: int | None) -> Membership | None:
    """Where a signed-in person lands: the account last used in this session, else their first one."""
    memberships = Membership.objects.filter(user=user)
    chosen = memberships.filter(account_id=last_account_id).first() if last_account_id else None
    return chosen or memberships.order_by("account_id").first()


def account_members(*, account_id: int) -> QuerySet[Any]:
    """Users with a membership in the account (the only people a conversation may be assigned to)."""
    return get_user_model().objects.filter(memberships__account_id=account_id).order_by("id")


def account_member(*, account_id: int, user_id: int) -> Any | None:
    """The user if they are a member of the account; None otherwise (another tenant's user too)."""
    return account_members(account_id=account_id).filter(pk=user_id).first()


def account_labels(*, account_id: int) -> list[Label]:
    """The account's labels, by name."""
    return list(Label.objects.filter(account_id=account_id).order_by("name"))


def label_names(*, account_id: int) -> list[str]:
    """The account's labels, by name."""
    return list(Label.objects.filter(account_id=account_id).order_by("name").values_list("name", flat=True))
