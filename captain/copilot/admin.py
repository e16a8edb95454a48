"""Admin page of copilot runs."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from captain.copilot.models import CopilotRun
from helpdesk.admin import (
    AccountScopedAdminMixin,
)


@admin.register(CopilotRun)
class CopilotRunAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """What the copilot drafted, summarised or rephrased for you, and what it cost (read only: runs write them).
    An account's administrator sees only the runs they asked for themselves: a run belongs to its asker
    (captain.copilot.selectors.copilot_run_list), so another member's is "does not exist", as on the dashboard."""

    read_only = True
    list_display = ["id", "kind", "status", "conversation", "user", "created_at"]
    list_filter = ["kind", "status"]
    list_select_related = ["conversation", "user"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[CopilotRun]:
        queryset = super().get_queryset(request)
        # Superusers run the server and see every row of every model; everyone else, their own runs.
        return queryset if request.user.is_superuser else queryset.filter(user_id=request.user.pk)

    def get_readonly_fields(self, request: HttpRequest, obj: CopilotRun | None = None) -> list[str]:
        return [f.name for f in CopilotRun._meta.concrete_fields]
