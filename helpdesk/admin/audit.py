"""The audit log in the Django admin: read-only, each account's administrators see their accounts' entries."""

from __future__ import annotations

from django.contrib import admin

from helpdesk.models import AuditEntry

from .scoping import AccountScopedAdminMixin


@admin.register(AuditEntry)
class AuditEntryAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    read_only = True
    list_display = (
        "created_at",
        "account",
        "actor_name",
        "source",
        "action",
        "model",
        "object_id",
        "object_repr",
    )
    list_filter = ("source", "action", "model")
    search_fields = ("object_repr", "actor_name", "object_id")
    date_hierarchy = "created_at"
    readonly_fields = (*list_display, "changes")
