"""Reads about accounts and the people in them; `access_membership` fetches and authorizes in one call."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
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


def access_membership(*, user: Any, account_id: int) -> Membership:
    """The caller's membership in the account; 404 when there is none (never reveal the account exists)."""
    membership = membership_for(user=user, account_id=account_id) if user.is_authenticated else None
    if membership is None:
        raise Http404("No such account.")
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
