"""What every dashboard page shares: resolving the account from the URL, role checks and the page frame
(account switcher, navigation)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, cast

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext, pgettext_lazy
from django.utils.translation import gettext_lazy as _

import helpdesk.ids  # noqa: F401  (registers the <id:...> path converter used below)
from helpdesk.models import Membership
from helpdesk.selectors import access_membership, account_switcher_accounts
from helpdesk.selectors.accounts import TwoFactorRequired

if TYPE_CHECKING:  # django-stubs-ext is a development requirement
    from django_stubs_ext import StrOrPromise


class AuthenticatedHttpRequest(HttpRequest):
    """The request an `account_view` receives (for annotations only, never instantiated): the decorator signs
    people in first, so `user` is a User, never AnonymousUser. A view taking a plain HttpRequest fits too."""

    user: User


P = ParamSpec("P")
AccountView = Callable[Concatenate[AuthenticatedHttpRequest, Membership, P], HttpResponse]

SESSION_ACCOUNT_KEY = "dashboard_account_id"

# Pages other apps add to the navigation, by URL name. Helpdesk must not import captain, so it only knows the
# names: when captain is not installed the names do not reverse and the links simply do not appear.
ADMIN_NAV_LINKS: tuple[tuple[str, StrOrPromise], ...] = (
    # Reports compare colleagues (conversations and ratings per agent): for the account's administrators.
    ("dashboard:reports", _("Reports")),
    ("dashboard:audit-log", _("Audit log")),
    ("dashboard:account-security", _("Sign-in security")),
    # "People" is elsewhere the people as opposed to the AI (人工); here the account's members.
    ("dashboard:people", pgettext_lazy("account members", "People")),
    ("captain-dashboard:playground", _("Playground")),
    ("captain-dashboard:usage", _("Usage")),
    ("captain-dashboard:faq-review", _("FAQ review")),
    ("captain-dashboard:routing-corrections", _("Routing corrections")),
    ("captain-dashboard:knowledge", _("Knowledge")),
    ("captain-dashboard:evaluation", _("Test before launch")),
)

ACCOUNT = "app/accounts/<id:account_id>/"
"""URL prefix of every page of one account (each views module's `urlpatterns` builds on it)."""
CONVERSATION = f"{ACCOUNT}conversations/<id:conversation_id>/"


def account_view(*, admin_only: bool = False) -> Callable[[AccountView[P]], Callable[..., HttpResponse]]:
    """Decorate a view taking `(request, membership, ...)` from a URL with `account_id`.

    Non-members get 404 (the dashboard never confirms another tenant's account exists); agents get 403 on
    `admin_only` pages, whose content (prompts, model output, costs) is for the account's administrators.
    """

    def decorator(view: AccountView[P]) -> Callable[..., HttpResponse]:
        @login_required
        @wraps(view)
        def wrapper(request: HttpRequest, account_id: int, *args: Any, **kwargs: Any) -> HttpResponse:
            try:
                membership = access_membership(user=request.user, account_id=account_id)
            except TwoFactorRequired:
                # Set it up (or, with an authenticator already, enter a code), then come back here.
                return redirect_to_login(request.get_full_path(), reverse("dashboard:security"))
            if admin_only and membership.role != Membership.Role.ADMIN:
                raise PermissionDenied(gettext("Only administrators of this account may open this page."))
            # Only write the session when the account changes: a write is a query on every page otherwise.
            if request.session.get(SESSION_ACCOUNT_KEY) != membership.account_id:
                request.session[SESSION_ACCOUNT_KEY] = membership.account_id
            # login_required let only a signed-in person this far, and the user model is auth's User.
            return view(cast(AuthenticatedHttpRequest, request), membership, *args, **kwargs)

        return wrapper

    return decorator


@dataclass(frozen=True)
class NavLink:
    url: str
    title: StrOrPromise


def is_admin(membership: Membership) -> bool:
    return membership.role == Membership.Role.ADMIN


def admin_nav_links(account_id: int) -> list[NavLink]:
    links = []
    for name, title in ADMIN_NAV_LINKS:
        try:
            links.append(NavLink(reverse(name, args=[account_id]), title))
        except NoReverseMatch:
            continue
    return links


def frame_context(request: HttpRequest, membership: Membership, **extra: Any) -> dict[str, Any]:
    """The page frame: current account, the accounts to switch to, and navigation for the caller's role."""
    accounts = account_switcher_accounts(user=request.user)
    admin = is_admin(membership)
    return {
        "account": membership.account,
        "membership": membership,
        "is_account_admin": admin,
        "accounts": accounts,
        "admin_links": admin_nav_links(membership.account_id) if admin else [],
        **extra,
    }
