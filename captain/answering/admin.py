"""Admin pages of credits, runs and reply jobs (read-mostly records)."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from captain.answering.models import CreditBalance, CreditLedgerEntry, ReplyJob, Run, RunArtifact
from helpdesk.admin import (
    AccountScopedAdminMixin,
)


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


@admin.register(RunArtifact)
class RunArtifactAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Long tool outputs a run kept out of the model's context."""

    read_only = True
    list_display = ["id", "run", "ref", "tool_name", "size", "created_at"]
    list_select_related = ["run"]

    def get_readonly_fields(self, request: HttpRequest, obj: RunArtifact | None = None) -> list[str]:
        return [f.name for f in RunArtifact._meta.concrete_fields]


@admin.register(ReplyJob)
class ReplyJobAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Which customer messages still wait for the AI, and how many attempts each took (read only: the runs and
    the sweeper own these rows)."""

    read_only = True
    list_display = ["message_id", "conversation", "status", "attempts", "enqueued_at", "created_at"]
    list_filter = ["status"]
    list_select_related = ["conversation"]
    ordering = ["-created_at"]

    def get_readonly_fields(self, request: HttpRequest, obj: ReplyJob | None = None) -> list[str]:
        return [f.name for f in ReplyJob._meta.concrete_fields]
