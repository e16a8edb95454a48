"""What every captain admin page shares: adopting what a service created, links between the pages."""

from __future__ import annotations

from typing import Any

from django.db.models import Model
from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse
from django.utils.http import urlencode

from captain.assistants.models import TRIAGE_KEY, Assistant
from helpdesk.admin import (
    admin_account_ids,
)
from helpdesk.models import Account


def field_values(obj: Model, names: Any) -> dict[str, Any]:
    return {name: getattr(obj, name) for name in names}


def adopt_created(form_instance: Model, created: Model) -> None:
    """The admin goes on with the instance its form built (inlines hang off it, the change log names it):
    make it the row the service created."""
    for field in created._meta.concrete_fields:
        setattr(form_instance, field.attname, getattr(created, field.attname))
    form_instance._state.adding = False
    form_instance._state.db = created._state.db


def playground_url(assistant: Assistant, start_key: str = "") -> str:
    """The dashboard playground with this assistant (and the node to start at) chosen; see
    captain/playground/views/playground.py for its `assistant` and `start` parameters."""
    try:
        base = reverse("captain-dashboard:playground", args=[assistant.account_id])
    except NoReverseMatch:  # captain installed without its dashboard pages
        return ""
    query: dict[str, int | str] = {"assistant": assistant.pk}
    if start_key and start_key != TRIAGE_KEY:
        query["start"] = start_key
    return f"{base}?{urlencode(query)}"


def changelist_url(model: type[Model], **filters: Any) -> str:
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    return f"{url}?{urlencode(filters)}" if filters else url


def admin_scope(request: HttpRequest) -> frozenset[int]:
    if request.user.is_superuser:
        return frozenset(Account.objects.values_list("pk", flat=True))
    return admin_account_ids(request)


def by_assistant(queryset: Any) -> list[tuple[Assistant, list[int]]]:
    """The selected rows' ids per assistant, so each service call scopes to one assistant (the queryset is
    already scoped to the caller's accounts by AccountScopedAdminMixin)."""
    ids: dict[int, list[int]] = {}
    for row_id, assistant_id in queryset.values_list("id", "assistant_id"):
        ids.setdefault(assistant_id, []).append(row_id)
    return [(assistant, ids[assistant.pk]) for assistant in Assistant.objects.filter(pk__in=ids)]
