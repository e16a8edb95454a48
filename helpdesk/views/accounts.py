"""Where a signed-in person lands, and the account switcher for people in several accounts."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from helpdesk.models import Membership
from helpdesk.selectors import landing_membership

from .base import SESSION_ACCOUNT_KEY, account_view

DEFAULT_FOLDER = "needs-people"


@require_GET
@login_required
def home(request: HttpRequest) -> HttpResponse:
    """The last account used in this session, else the first one; a user in no account sees why."""
    chosen = landing_membership(user=request.user, last_account_id=request.session.get(SESSION_ACCOUNT_KEY))
    if chosen is None:
        return render(request, "dashboard/no_account.html", status=403)
    return redirect("dashboard:conversation-list", chosen.account_id, DEFAULT_FOLDER)


@require_GET
def switch_account(request: HttpRequest) -> HttpResponse:
    """Target of the switcher form (GET `?account=<id>`); the account page itself checks membership."""
    value = request.GET.get("account", "")
    if not value.isdigit():
        return redirect("dashboard:home")
    return redirect("dashboard:account-home", int(value))


@require_GET
@account_view()
def account_home(request: HttpRequest, membership: Membership) -> HttpResponse:
    return redirect("dashboard:conversation-list", membership.account_id, DEFAULT_FOLDER)
