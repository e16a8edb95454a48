"""Signing in: the password, then (for a person with two-factor sign-in on) a code from their authenticator app
or a backup code. Between the two steps nobody is signed in: the session only remembers whose password was right,
for `PENDING_SECONDS`, so a half-finished sign-in opens no page and no API call.

Wrong codes are bounded three ways: django-otp's throttling (a wait that doubles after each), `PENDING_FAILURES`
per password step (then the password again), and django-axes, which counts each wrong code as a failed sign-in
towards the same lockout as wrong passwords.
"""

from __future__ import annotations

import time
from typing import Any

from axes.handlers.proxy import AxesProxyHandler
from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth import login as auth_login
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods

from helpdesk.selectors.sign_ins import active_user, two_factor_enabled
from helpdesk.services.sign_ins import code_failure_record
from helpdesk.services.two_factor import two_factor_check, wait_sentence

PENDING_KEY = "two_factor_pending"
PENDING_SECONDS = 300
PENDING_FAILURES = 3


class CodeForm(forms.Form):
    code = forms.CharField(
        label=_("Code"),
        max_length=32,
        widget=forms.TextInput(
            attrs={"autocomplete": "one-time-code", "inputmode": "numeric", "autofocus": True}
        ),
        help_text=_("The 6-digit code from your authenticator app, or one of your backup codes."),
    )


class SignInView(LoginView):
    """Django's sign-in; a person with two-factor sign-in on is sent to the code step instead of signed in."""

    def form_valid(self, form: AuthenticationForm) -> HttpResponse:
        user = form.get_user()
        if not two_factor_enabled(user=user):
            return super().form_valid(form)
        # A fresh session key for the half-signed-in state, so one planted before the password cannot be used.
        self.request.session.cycle_key()
        self.request.session[PENDING_KEY] = {
            "user_id": user.pk,
            "backend": getattr(user, "backend", settings.AUTHENTICATION_BACKENDS[-1]),
            "started": time.time(),
            "next": self.get_redirect_url(),
            "failures": 0,
        }
        return redirect("two-factor-verify")


def _pending(request: HttpRequest) -> dict[str, Any] | None:
    pending = request.session.get(PENDING_KEY)
    if not isinstance(pending, dict) or time.time() - float(pending.get("started", 0)) > PENDING_SECONDS:
        request.session.pop(PENDING_KEY, None)
        return None
    return pending


def _again(request: HttpRequest, message: str) -> HttpResponse:
    """Back to the password step with a reason (the pending state is gone)."""
    request.session.pop(PENDING_KEY, None)
    return render(request, "registration/two_factor.html", {"expired": message}, status=400)


@sensitive_post_parameters("code")
@csrf_protect
@never_cache
@require_http_methods(["GET", "POST"])
def two_factor_verify(request: HttpRequest) -> HttpResponse:
    pending = _pending(request)
    if pending is None:
        return _again(request, gettext("This sign-in took too long or was not started. Sign in again."))
    user = active_user(user_id=int(pending["user_id"]))
    if user is None:
        return _again(request, gettext("Sign in again."))
    credentials = {get_user_model().USERNAME_FIELD: user.get_username(), "two_factor": True}
    if not AxesProxyHandler.is_allowed(request, credentials):
        request.session.pop(PENDING_KEY, None)
        return _locked_out(request)
    form = CodeForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        check = two_factor_check(user=user, code=form.cleaned_data["code"])
        if check.ok:
            request.session.pop(PENDING_KEY, None)
            # django-otp marks the session verified when the user signed in carries the device.
            setattr(user, "otp_device", check.device)  # noqa: B010 (not a field of User: mypy refuses the attribute)
            auth_login(request, user, backend=pending["backend"])
            return HttpResponseRedirect(safe_next(request, pending.get("next") or ""))
        if check.wait_seconds:
            form.add_error("code", wait_sentence(check.wait_seconds))
        else:
            # Counted by axes (lockout) and recorded in the sign-in history as a wrong code.
            code_failure_record(request=request, username=user.get_username())
            if getattr(request, "axes_locked_out", False):
                request.session.pop(PENDING_KEY, None)
                return _locked_out(request)
            pending["failures"] = int(pending.get("failures", 0)) + 1
            request.session[PENDING_KEY] = pending
            if pending["failures"] >= PENDING_FAILURES:
                return _again(request, gettext("Too many wrong codes. Sign in again with your password."))
            form.add_error("code", gettext("That code is not right. Try the newest code from your app."))
    status = 400 if request.method == "POST" else 200
    return render(request, "registration/two_factor.html", {"form": form}, status=status)


def _locked_out(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        settings.AXES_LOCKOUT_TEMPLATE,
        {"failure_limit": settings.AXES_FAILURE_LIMIT, "cooloff_timedelta": settings.AXES_COOLOFF_TIME},
        status=settings.AXES_HTTP_RESPONSE_CODE,
    )


def safe_next(request: HttpRequest, target: str) -> str:
    allowed = url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=False)
    return target if target and allowed else str(settings.LOGIN_REDIRECT_URL)


def admin_sign_in(request: HttpRequest) -> HttpResponse:
    """The admin's own sign-in form knows no second step: send it to ours (same `next`)."""
    next_url = request.GET.get("next") or reverse("admin:index")
    return HttpResponseRedirect(f"{reverse('login')}?{urlencode({'next': next_url})}")
