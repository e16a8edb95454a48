"""The audit log page: who changed which configuration of the account, when, from where, and the before/after
of each field (secrets only as "changed"). Administrators only (agents 403, other accounts 404), like reports:
it names colleagues and shows every setting of the account."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from django import forms
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import URLPattern, path
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET

from helpdesk.models import AuditEntry, Membership
from helpdesk.selectors.audit import audit_actors, audit_entries
from helpdesk.services.audit import SECRET_MARK, audit_registered

from .base import ACCOUNT, account_view, frame_context

PAGE_SIZE = 50


class AuditFilterForm(forms.Form):
    model = forms.ChoiceField(required=False, label=_("What"))
    actor = forms.TypedChoiceField(required=False, coerce=int, empty_value=None, label=_("Who"))
    since = forms.DateField(required=False, label=_("From"), widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, label=_("To"), widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(self, *args: Any, account_id: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        everything = [("", _("Everything"))]
        cast(forms.ChoiceField, self.fields["model"]).choices = everything + [
            (label, label) for label in audit_registered()
        ]
        cast(forms.ChoiceField, self.fields["actor"]).choices = [("", _("Everyone"))] + [
            (str(actor_id), name) for actor_id, name in audit_actors(account_id=account_id)
        ]


def change_rows(entry: AuditEntry) -> list[tuple[str, Any, Any, bool]]:
    """(field, before, after, secret) for the template: a secret's pair is the "changed" mark on both sides,
    shown once as "Changed"."""
    return [
        (name, before, after, before == after == SECRET_MARK)
        for name, (before, after) in sorted(entry.changes.items())
    ]


@require_GET
@account_view(admin_only=True)
def audit_log(request: HttpRequest, membership: Membership) -> HttpResponse:
    form = AuditFilterForm(request.GET or None, account_id=membership.account_id)
    filters: dict[str, Any] = {}
    if form.is_valid():
        data = form.cleaned_data
        filters = {
            "model": data["model"],
            "actor_id": data["actor"],
            "since": data["since"],
            "until": data["until"],
        }
    # A filter we cannot apply (a person with no entries) shows nothing, not everything.
    unusable = form.is_bound and not form.is_valid()
    entries: Sequence[AuditEntry] | QuerySet[AuditEntry] = (
        [] if unusable else audit_entries(account_id=membership.account_id, **filters)
    )
    page = Paginator(entries, PAGE_SIZE).get_page(request.GET.get("page"))
    rows = [(entry, change_rows(entry)) for entry in page.object_list]
    query = request.GET.copy()
    query.pop("page", None)
    context = frame_context(request, membership, form=form, page=page, rows=rows, query=query.urlencode())
    return render(request, "dashboard/audit_log.html", context)


urlpatterns: list[URLPattern] = [path(f"{ACCOUNT}audit/", audit_log, name="audit-log")]
