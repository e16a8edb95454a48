"""Sign-in security pages: a person's own (two-factor sign-in on or off, backup codes, their sign-in history)
and an account administrator's (require two-factor sign-in for the account; members' state and history)."""

from __future__ import annotations

from typing import Any, cast

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import URLPattern, path
from django.utils.translation import gettext
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods
from django_otp import login as otp_login

from helpdesk.models import Membership
from helpdesk.selectors.sign_ins import (
    account_member_for_history,
    backup_codes_left,
    member_security,
    sign_ins_for,
    two_factor_enabled,
    two_factor_required,
)
from helpdesk.services.sign_ins import code_failure_record
from helpdesk.services.two_factor import (
    TwoFactorError,
    account_two_factor_set,
    backup_codes_renew,
    totp_enrolment_confirm,
    totp_enrolment_start,
    totp_qr_svg,
    totp_secret,
    two_factor_check,
    two_factor_disable,
    wait_sentence,
)

from .base import ACCOUNT, account_view, frame_context
from .sign_in import CodeForm, safe_next


def _verified(request: HttpRequest) -> bool:
    return bool(getattr(request.user, "is_verified", lambda: False)())


def _page(request: HttpRequest, *, status: int = 200, **extra: Any) -> HttpResponse:
    user = request.user
    enabled = two_factor_enabled(user=user)
    context: dict[str, Any] = {
        "enabled": enabled,
        "verified": _verified(request),
        "required": two_factor_required(user=user),
        "codes_left": backup_codes_left(user=user) if enabled else 0,
        "history": sign_ins_for(user_id=cast(int, user.pk)),  # login_required: never anonymous
        # Only a path on this site: the page links to it ("Continue") and posts it back.
        "next": safe_next(request, wanted)
        if (wanted := request.POST.get("next") or request.GET.get("next"))
        else "",
        "form": CodeForm(),
        **extra,
    }
    pending = context.get("pending")
    if pending is not None:
        context["qr_svg"] = totp_qr_svg(pending)
        context["secret"] = totp_secret(pending)
    return render(request, "dashboard/security.html", context, status=status)


@sensitive_post_parameters("code")
@login_required
@require_http_methods(["GET", "POST"])
def my_security(request: HttpRequest) -> HttpResponse:
    """GET shows the state; POST `action` = start | confirm | verify | backup | disable (each but start with a
    code). A refused step shows the page again with the reason (400), nothing changed."""
    if request.method == "GET":
        return _page(request)
    action, code = request.POST.get("action", ""), request.POST.get("code", "")
    try:
        if action == "start":
            return _page(request, pending=totp_enrolment_start(user=request.user))
        if action == "confirm":
            device, codes = totp_enrolment_confirm(user=request.user, code=code)
            otp_login(request, device)
            return _page(request, new_codes=codes, just_enabled=True)
        if action == "verify":
            check = two_factor_check(user=request.user, code=code)
            if not check.ok:
                raise TwoFactorError(_refusal(request, check.wait_seconds))
            otp_login(request, check.device)
            return redirect(safe_next(request, request.POST.get("next", "")))
        if action in ("backup", "disable") and not _verified(request):
            raise TwoFactorError(gettext("Enter a code first to confirm it is you."))
        if action == "backup":
            check = two_factor_check(user=request.user, code=code)
            if not check.ok:
                raise TwoFactorError(_refusal(request, check.wait_seconds))
            return _page(request, new_codes=backup_codes_renew(user=request.user))
        if action == "disable":
            two_factor_disable(user=request.user, code=code)
            return redirect("dashboard:security")
    except TwoFactorError as refused:
        if refused.wrong_code:
            _wrong_code(request)
        pending = None
        if action in ("start", "confirm") and not two_factor_enabled(user=request.user):
            pending = totp_enrolment_start(user=request.user)
        return _page(request, status=400, error=str(refused), pending=pending, failed_action=action)
    return _page(request, status=400, error=gettext("Unknown action."))


def _wrong_code(request: HttpRequest) -> None:
    """A wrong code here counts like one at sign-in: the history shows it and django-axes counts it."""
    code_failure_record(request=request, username=request.user.get_username())


def _refusal(request: HttpRequest, wait_seconds: int) -> str:
    if wait_seconds:
        return wait_sentence(wait_seconds)
    _wrong_code(request)
    return gettext("That code is not right.")


@require_http_methods(["GET", "POST"])
@account_view(admin_only=True)
def account_security(request: HttpRequest, membership: Membership) -> HttpResponse:
    """Require two-factor sign-in for the account; each member's state and last sign-in."""
    error, status = "", 200
    if request.method == "POST":
        try:
            account_two_factor_set(
                account=membership.account,
                required=request.POST.get("required") == "on",
                by_user=request.user,
            )
            return redirect("dashboard:account-security", membership.account_id)
        except TwoFactorError as refused:
            error, status = str(refused), 400
    context = frame_context(request, membership, members=member_security(account_id=membership.account_id))
    return render(request, "dashboard/account_security.html", {**context, "error": error}, status=status)


@require_http_methods(["GET"])
@account_view(admin_only=True)
def member_sign_ins(request: HttpRequest, membership: Membership, user_id: int) -> HttpResponse:
    member = account_member_for_history(account_id=membership.account_id, user_id=user_id)
    if member is None:
        raise Http404("No such member.")
    context = frame_context(request, membership, member=member, history=sign_ins_for(user_id=user_id))
    return render(request, "dashboard/member_sign_ins.html", context)


urlpatterns: list[URLPattern] = [
    path("app/security/", my_security, name="security"),
    path(f"{ACCOUNT}security/", account_security, name="account-security"),
    path(f"{ACCOUNT}security/members/<id:user_id>/", member_sign_ins, name="member-sign-ins"),
]
