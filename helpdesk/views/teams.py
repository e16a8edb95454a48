"""One's own availability, switched from the top bar of every account page (dashboard/partials/availability.html).

The switch is a plain form, so it works without JavaScript (the page comes back where it was); with JavaScript
(helpdesk/availability.js) it posts with fetch and the page stays as it is. Teams themselves are edited in the
Django admin and over the REST API (helpdesk.api.teams).
"""

from __future__ import annotations

from django import forms
from django.contrib import messages as flash
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import URLPattern, path, reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from helpdesk.models import Membership
from helpdesk.services.teams import membership_set_availability

from .base import ACCOUNT, account_view


class AvailabilityForm(forms.Form):
    availability = forms.ChoiceField(choices=Membership.Availability.choices)
    next = forms.CharField(required=False, max_length=2000)


def wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


@require_POST
@account_view()
def availability_set(request: HttpRequest, membership: Membership) -> HttpResponse:
    form = AvailabilityForm(request.POST)
    if not form.is_valid():
        if wants_json(request):
            return JsonResponse({"error": _("Choose online, busy or offline.")}, status=400)
        flash.error(request, _("Choose online, busy or offline."))
    else:
        membership_set_availability(membership=membership, availability=form.cleaned_data["availability"])
        label = membership.get_availability_display().lower()
        if wants_json(request):
            return JsonResponse({"availability": membership.availability, "label": label})
        flash.success(request, _("You are %(availability)s.") % {"availability": label})
    # Back to the page the switch was on, never to another site.
    target = form.data.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = reverse("dashboard:account-home", args=[membership.account_id])
    return redirect(target)


urlpatterns: list[URLPattern] = [
    path(f"{ACCOUNT}availability/", availability_set, name="availability-set"),
]
