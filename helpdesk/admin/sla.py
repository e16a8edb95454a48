"""Admin of SLA policies (an inbox names its policy on the inbox's page) and the record of missed targets."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from helpdesk.models import SlaBreach, SlaPolicy

from .scoping import AccountScopedAdminMixin


@admin.register(SlaPolicy)
class SlaPolicyAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Targets for people's work, in minutes (helpdesk.selectors.sla says how each is counted)."""

    list_display = [
        "name",
        "account",
        "first_response_minutes",
        "next_response_minutes",
        "resolution_minutes",
        "business_hours_only",
    ]
    list_filter = [("account", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["name"]
    fields = [
        "account",
        "name",
        "first_response_minutes",
        "next_response_minutes",
        "resolution_minutes",
        "business_hours_only",
    ]

    def get_readonly_fields(self, request: HttpRequest, obj: SlaPolicy | None = None) -> list[str]:
        # Inboxes of the account name it: a policy stays in its account.
        return ["account"] if obj is not None and obj.pk else []


@admin.register(SlaBreach)
class SlaBreachAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Read-only: the sweep writes these (helpdesk.services.sla)."""

    list_display = ["conversation", "kind", "due_at", "policy", "created_at"]
    list_filter = ["kind", ("account", admin.RelatedOnlyFieldListFilter)]
    readonly_fields = ["account", "conversation", "policy", "kind", "due_at", "created_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: SlaBreach | None = None) -> bool:
        return False
