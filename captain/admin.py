"""Django admin for captain: assistants with their scenarios and FAQ, inbox links, credits and run records.

Tenant scoping comes from `helpdesk.admin.AccountScopedAdminMixin` (one rule for both apps): non-superuser
staff reach only accounts where they are admins. Builder text is validated by the forms in `captain.forms`.
"""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from helpdesk.admin import AccountScopedAdminMixin, AccountScopedInlineMixin

from .forms import (
    AssistantAdminForm,
    FaqEntryAdminForm,
    ModelEndpointAdminForm,
    RouterChoiceForm,
    RoutingEdgeInlineFormSet,
    RoutingNodeInlineFormSet,
    RoutingRuleInlineFormSet,
    ScenarioAdminForm,
    ScenarioInlineFormSet,
)
from .models import (
    Assistant,
    AssistantInbox,
    CreditBalance,
    CreditLedgerEntry,
    FaqEntry,
    ModelEndpoint,
    RoutingConfig,
    RoutingEdge,
    RoutingNode,
    RoutingRule,
    Run,
    Scenario,
)
from .services.routing import routing_enable_default


class ScenarioInline(AccountScopedInlineMixin, admin.StackedInline):
    model = Scenario
    form = ScenarioAdminForm
    formset = ScenarioInlineFormSet
    extra = 0
    fields = ["title", "key", "description", "instruction", "tools", "enabled"]


class FaqEntryInline(AccountScopedInlineMixin, admin.TabularInline):
    model = FaqEntry
    extra = 0
    fields = ["question", "answer", "enabled"]


class RoutingConfigInline(AccountScopedInlineMixin, admin.StackedInline):
    """Present: graph routing is on (docs/routing.md). Absent: the plain star of handoff tools."""

    model = RoutingConfig
    form = RouterChoiceForm
    extra = 0
    max_num = 1
    verbose_name = "routing (graph routing is on when this exists)"


class RoutingNodeInline(AccountScopedInlineMixin, admin.StackedInline):
    model = RoutingNode
    form = RouterChoiceForm
    formset = RoutingNodeInlineFormSet
    extra = 0
    fields = [
        "key",
        "mode",
        "timing",
        "history_rounds",
        "rule_prompt",
        "is_global",
        "examples",
        "router_endpoint",
        "router_model",
    ]


class RoutingEdgeInline(AccountScopedInlineMixin, admin.TabularInline):
    model = RoutingEdge
    formset = RoutingEdgeInlineFormSet
    extra = 0
    fields = ["source", "target"]


class RoutingRuleInline(AccountScopedInlineMixin, admin.TabularInline):
    model = RoutingRule
    formset = RoutingRuleInlineFormSet
    extra = 0
    fields = ["node", "position", "match", "value", "target"]


@admin.register(Assistant)
class AssistantAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    form = AssistantAdminForm
    list_display = ["id", "name", "account", "product_name", "model", "created_at"]
    search_fields = ["name", "product_name"]
    inlines = [ScenarioInline, FaqEntryInline]
    routing_inlines = [RoutingConfigInline, RoutingNodeInline, RoutingEdgeInline, RoutingRuleInline]

    def get_inlines(self, request: HttpRequest, obj: Assistant | None) -> list:
        # The graph refers to saved scenarios by key, so it is edited once the assistant exists.
        return [*self.inlines, *self.routing_inlines] if obj is not None and obj.pk else list(self.inlines)

    def save_model(self, request: HttpRequest, obj: Assistant, form, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if not change:
            routing_enable_default(assistant=obj)

    def save_formset(self, request: HttpRequest, form, formset, change: bool) -> None:
        assistant: Assistant = form.instance
        instances = formset.save(commit=False)
        for obj in instances:
            if isinstance(obj, FaqEntry):
                obj.account_id = assistant.account_id  # an FAQ entry belongs to its assistant's account
            obj.save()
        for obj in formset.deleted_objects:
            obj.delete()
        formset.save_m2m()


@admin.register(ModelEndpoint)
class ModelEndpointAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """An account's own OpenAI-compatible endpoint (its URL, its key). The server's endpoints are settings."""

    form = ModelEndpointAdminForm
    list_display = ["name", "account", "base_url", "created_at"]
    search_fields = ["name"]


@admin.register(AssistantInbox)
class AssistantInboxAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    list_display = ["assistant", "inbox"]
    list_select_related = ["assistant", "inbox"]


@admin.register(FaqEntry)
class FaqEntryAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    form = FaqEntryAdminForm
    list_display = ["id", "question", "assistant", "enabled"]
    list_filter = ["enabled"]
    search_fields = ["question", "answer"]

    def save_model(self, request: HttpRequest, obj: FaqEntry, form, change: bool) -> None:
        obj.account_id = obj.assistant.account_id
        super().save_model(request, obj, form, change)


@admin.register(CreditBalance)
class CreditBalanceAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Account admins may look; only the site operator changes a limit (it is what the tenant pays for)."""

    list_display = ["account", "limit", "used", "remaining"]
    superuser_only_add = True
    superuser_only_delete = True

    def get_readonly_fields(self, request: HttpRequest, obj: CreditBalance | None = None) -> list[str]:
        return ["used"] if request.user.is_superuser else ["account", "limit", "used"]

    def has_change_permission(self, request: HttpRequest, obj: CreditBalance | None = None) -> bool:
        return request.user.is_superuser and super().has_change_permission(request, obj)


@admin.register(CreditLedgerEntry)
class CreditLedgerEntryAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """The ledger is append-only: rows are written with the message they pay for, never edited here."""

    read_only = True
    list_display = ["id", "account", "kind", "amount", "assistant", "agent_key", "message", "created_at"]
    list_filter = ["kind"]
    list_select_related = ["account", "assistant"]

    def get_readonly_fields(self, request: HttpRequest, obj: CreditLedgerEntry | None = None) -> list[str]:
        return [f.name for f in CreditLedgerEntry._meta.concrete_fields]

    def has_delete_permission(self, request: HttpRequest, obj: CreditLedgerEntry | None = None) -> bool:
        return False


@admin.register(Run)
class RunAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    read_only = True
    list_display = [
        "id",
        "outcome",
        "conversation",
        "start_agent_key",
        "end_agent_key",
        "llm_calls",
        "created_at",
    ]
    list_filter = ["outcome", "credit_used"]
    search_fields = ["trace_id"]
    list_select_related = ["conversation"]

    def get_readonly_fields(self, request: HttpRequest, obj: Run | None = None) -> list[str]:
        return [f.name for f in Run._meta.concrete_fields]
