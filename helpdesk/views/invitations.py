"""The account's People page (administrators: members with their role, pending invitations with a withdraw
button, the invite form) and the public page an invitation's link opens (`/invite/<token>/`): a new person sets
a name and a password, someone who already has a user with the invited address signs in and joins. A link that
no longer works gets a page that says why (410; 404 for a token nobody was sent) and changes nothing."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages as flash
from django.contrib.auth import get_user_model, login
from django.contrib.auth.password_validation import password_validators_help_text_html, validate_password
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from helpdesk.models import Invitation, Membership
from helpdesk.selectors.invitations import (
    account_people,
    invitation_for_token,
    pending_invitations,
    user_with_email,
)
from helpdesk.selectors.sign_ins import two_factor_user_ids
from helpdesk.services.invitations import (
    InvitationError,
    invitation_accept,
    invitation_create,
    invitation_refusal,
    invitation_revoke,
)

from .base import ACCOUNT, account_view, frame_context

# The backend a freshly made person is signed in with (the project also lists axes' standalone backend, which
# authenticates nobody by itself).
SIGN_IN_BACKEND = "django.contrib.auth.backends.ModelBackend"


class InviteForm(forms.Form):
    email = forms.EmailField(label=gettext_lazy("E-mail address"), max_length=254)
    role = forms.ChoiceField(
        label=gettext_lazy("Role"), choices=Membership.Role.choices, initial=Membership.Role.AGENT
    )


class AcceptForm(forms.Form):
    name = forms.CharField(label=gettext_lazy("Your name"), max_length=150)
    password1 = forms.CharField(
        label=gettext_lazy("Password"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )
    password2 = forms.CharField(
        label=gettext_lazy("Password again"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def __init__(self, *args: Any, email: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.email = email

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        first, second = data.get("password1"), data.get("password2")
        if first and second and first != second:
            self.add_error("password2", _("The two passwords differ."))
        elif first:
            # The project's validators, shown on the form (the service checks them again before it writes).
            candidate = get_user_model()(
                username=self.email, email=self.email, first_name=data.get("name", "")
            )
            try:
                validate_password(first, user=candidate)
            except ValidationError as exc:
                self.add_error("password1", exc)
        return data


def _people_page(
    request: HttpRequest, membership: Membership, *, form: InviteForm, status: int = 200
) -> HttpResponse:
    now = timezone.now()
    invitations = [
        (invitation, invitation.state(now))
        for invitation in pending_invitations(account_id=membership.account_id)
    ]
    context = frame_context(
        request,
        membership,
        people=list(account_people(account_id=membership.account_id)),
        invitations=invitations,
        two_factor_users=two_factor_user_ids(account_id=membership.account_id),
        form=form,
        expired=Invitation.State.EXPIRED,
    )
    return render(request, "helpdesk/people/people.html", context, status=status)


@require_GET
@account_view(admin_only=True)
def people(request: HttpRequest, membership: Membership) -> HttpResponse:
    return _people_page(request, membership, form=InviteForm())


@require_POST
@account_view(admin_only=True)
def people_invite(request: HttpRequest, membership: Membership) -> HttpResponse:
    form = InviteForm(request.POST)
    if form.is_valid():
        try:
            invitation = invitation_create(
                account_id=membership.account_id,
                email=form.cleaned_data["email"],
                role=form.cleaned_data["role"],
                invited_by=request.user,
            )
        except InvitationError as exc:
            form.add_error("email", exc.message)
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            flash.success(request, _("Invitation sent to %(email)s.") % {"email": invitation.email})
            return redirect("dashboard:people", membership.account_id)
    return _people_page(request, membership, form=form, status=400)


@require_POST
@account_view(admin_only=True)
def people_invitation_revoke(
    request: HttpRequest, membership: Membership, invitation_id: int
) -> HttpResponse:
    try:
        invitation = invitation_revoke(
            account_id=membership.account_id, invitation_id=invitation_id, revoked_by=request.user
        )
    except InvitationError as exc:
        flash.error(request, exc.message)
    else:
        flash.success(request, _("The invitation to %(email)s was withdrawn.") % {"email": invitation.email})
    return redirect("dashboard:people", membership.account_id)


def _gone(request: HttpRequest, error: InvitationError) -> HttpResponse:
    status = 404 if error.code == "unknown" else 410
    return render(request, "helpdesk/people/link_gone.html", {"error": error}, status=status)


@require_http_methods(["GET", "POST"])
def invitation_accept_page(request: HttpRequest, token: str) -> HttpResponse:
    invitation = invitation_for_token(token=token)
    refusal = invitation_refusal(invitation)
    if refusal is not None or invitation is None:
        return _gone(
            request, refusal or InvitationError(_("This invitation link is not valid."), code="unknown")
        )
    signed_in = request.user.is_authenticated
    existing = None if signed_in else user_with_email(email=invitation.email)
    form = AcceptForm(request.POST or None, email=invitation.email)
    error = ""
    if request.method == "POST":
        try:
            if signed_in:
                membership = invitation_accept(token=token, user=request.user)
            elif existing is not None:
                raise InvitationError(_("Sign in to join."), code="sign_in")
            elif form.is_valid():
                membership = invitation_accept(
                    token=token, name=form.cleaned_data["name"], password=form.cleaned_data["password1"]
                )
                login(request, membership.user, backend=SIGN_IN_BACKEND)
            else:
                membership = None
        except InvitationError as exc:
            if exc.code in {"used", "revoked", "expired", "unknown"}:
                return _gone(request, exc)
            error = exc.message
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            if membership is not None:
                flash.success(request, _("Welcome to %(account)s.") % {"account": invitation.account.name})
                return redirect("dashboard:account-home", membership.account_id)
    context = {
        "invitation": invitation,
        "form": form,
        "error": error,
        "signed_in": signed_in,
        # Someone else's session (a shared computer): say so before they click, not after.
        "wrong_person": signed_in
        and (getattr(request.user, "email", "") or "").strip().lower() != invitation.email,
        "existing": existing is not None,
        "login_url": f"{reverse('login')}?next={reverse('dashboard:invitation-accept', args=[token])}",
        "password_help": password_validators_help_text_html(),
    }
    return render(
        request, "helpdesk/people/accept.html", context, status=400 if request.method == "POST" else 200
    )


urlpatterns: list[URLPattern] = [
    path(f"{ACCOUNT}people/", people, name="people"),
    path(f"{ACCOUNT}people/invite/", people_invite, name="people-invite"),
    path(
        f"{ACCOUNT}people/invitations/<id:invitation_id>/withdraw/",
        people_invitation_revoke,
        name="people-invitation-revoke",
    ),
    path("invite/<str:token>/", invitation_accept_page, name="invitation-accept"),
]
