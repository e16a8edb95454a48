"""Admin page of question sets (read only: the dashboard's "Test before launch" page writes them)."""

from __future__ import annotations

from django.contrib import admin

from captain.evaluation.models import EvalSet
from helpdesk.admin import AccountScopedAdminMixin


@admin.register(EvalSet)
class EvalSetAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Sets of test questions per assistant; their questions, runs and marks are on the dashboard page."""

    read_only = True
    list_display = ["id", "name", "assistant", "created"]
    list_select_related = ["assistant"]
    search_fields = ["name"]
