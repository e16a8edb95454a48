"""Admin of macros, automation rules and the record of rule runs (read-only: the rules write it)."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from helpdesk.models import AutomationRule, AutomationRun, Macro

from .scoping import AccountScopedAdminMixin


@admin.register(Macro)
class MacroAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Named lists of actions people run with one click (helpdesk.services.macros); the actions are checked on
    save (helpdesk.models.automation.actions_parse)."""

    list_display = ["name", "account", "visibility", "owner", "updated_at"]
    list_filter = ["visibility", ("account", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["name"]
    fields = ["account", "name", "visibility", "owner", "actions"]


@admin.register(AutomationRule)
class AutomationRuleAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Event + conditions + actions (helpdesk.services.automation_rules); a rule's own changes raise no events."""

    list_display = ["name", "account", "event", "active", "updated_at"]
    list_filter = ["event", "active", ("account", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["name"]
    fields = ["account", "name", "active", "event", "conditions", "actions"]


@admin.register(AutomationRun)
class AutomationRunAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    list_display = ["rule_name", "conversation", "event", "error", "created_at"]
    list_filter = ["event", ("account", admin.RelatedOnlyFieldListFilter)]
    readonly_fields = [
        "account",
        "rule",
        "rule_name",
        "conversation",
        "event",
        "actions_done",
        "error",
        "created_at",
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: AutomationRun | None = None) -> bool:
        return False
