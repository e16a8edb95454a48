"""One's own dashboard language, switched from the top bar of every page (dashboard/partials/language.html).

The choice belongs to the person, not to one account: it is stored on their PersonSettings row and applies in
every account and on every device (helpdesk.i18n activates it). "Browser language" stores nothing and lets
Django's LocaleMiddleware follow Accept-Language.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import URLPattern, path, reverse
from django.utils import translation
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from helpdesk.i18n import remember_person_language
from helpdesk.models import Language
from helpdesk.services.languages import person_language_set

from .base import AuthenticatedHttpRequest


class LanguageForm(forms.Form):
    language = forms.ChoiceField(choices=[("", ""), *Language.choices], required=False)
    next = forms.CharField(required=False, max_length=2000)


@require_POST
@login_required
def language_set(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = LanguageForm(request.POST)
    if not form.is_valid():
        flash.error(request, _("Choose English, 简体中文 or your browser's language."))
    else:
        language = person_language_set(user_id=request.user.pk, language=form.cleaned_data["language"])
        remember_person_language(request.session, user_id=request.user.pk, language=language)
        # The confirmation is read on the next page, in the language just chosen.
        translation.activate(language or translation.get_language_from_request(request))
        flash.success(request, _("The dashboard now speaks your chosen language."))
    # Back to the page the switch was on, never to another site.
    target = form.data.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = reverse("dashboard:home")
    return redirect(target)


urlpatterns: list[URLPattern] = [
    path("app/language/", language_set, name="language-set"),
]
