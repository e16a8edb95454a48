"""Admin pages of FAQ pairs and knowledge documents."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import Model
from django.http import HttpRequest

from captain.admin_support import (
    adopt_created,
)
from captain.assistants.models import Assistant
from captain.knowledge.forms import FaqEntryAdminForm
from captain.knowledge.models import FaqEntry, KnowledgeDocument
from captain.knowledge.services.faq import (
    FAQ_ENTRY_FIELDS,
    faq_entries_review,
    faq_entry_create,
    faq_entry_delete,
    faq_entry_update,
)
from captain.knowledge.services.knowledge import document_delete, document_resync
from helpdesk.admin import (
    AccountScopedAdminMixin,
    AccountScopedInlineMixin,
)


class FaqEntryInline(AccountScopedInlineMixin, admin.TabularInline):
    model = FaqEntry
    extra = 0
    classes = ["collapse"]
    fields = [*FAQ_ENTRY_FIELDS, "status"]
    readonly_fields = ["status"]


@admin.register(FaqEntry)
class FaqEntryAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Entries saved here are approved; drafts (pending) move only through the approve/reject actions."""

    form = FaqEntryAdminForm
    list_display = ["id", "question", "assistant", "status", "source", "enabled"]
    list_filter = [("assistant", admin.RelatedOnlyFieldListFilter), "status", "source", "enabled"]
    list_select_related = ["assistant"]
    search_fields = ["question", "answer"]
    actions = ["approve_selected", "reject_selected"]
    REVIEW_READONLY = ["status", "source", "source_document", "source_conversation", "reviewed_at"]

    def get_readonly_fields(self, request: HttpRequest, obj: FaqEntry | None = None) -> list[str]:
        # An entry belongs to its assistant's account; moving it would leave that account behind.
        return ["assistant", *self.REVIEW_READONLY] if obj is not None and obj.pk else []

    def _review(self, request: HttpRequest, queryset: Any, action: str) -> None:
        # The queryset is already scoped to the caller's accounts (AccountScopedAdminMixin); review per assistant
        # so the service's own scoping applies too.
        changed = 0
        by_assistant: dict[int, list[int]] = {}
        for entry_id, assistant_id in queryset.values_list("id", "assistant_id"):
            by_assistant.setdefault(assistant_id, []).append(entry_id)
        for assistant in Assistant.objects.filter(pk__in=by_assistant):
            changed += faq_entries_review(assistant=assistant, ids=by_assistant[assistant.pk], action=action)
        done = "approved" if action == "approve" else "rejected"
        self.message_user(request, f"{changed} FAQ entries {done}.")

    @admin.action(description="Approve selected FAQ entries")
    def approve_selected(self, request: HttpRequest, queryset: Any) -> None:
        self._review(request, queryset, "approve")

    @admin.action(description="Reject selected FAQ entries")
    def reject_selected(self, request: HttpRequest, queryset: Any) -> None:
        self._review(request, queryset, "reject")

    def save_model(self, request: HttpRequest, obj: FaqEntry, form: FaqEntryAdminForm, change: bool) -> None:
        fields = {name: form.cleaned_data[name] for name in FAQ_ENTRY_FIELDS if name in form.cleaned_data}
        if change:
            faq_entry_update(entry=obj, **{k: v for k, v in fields.items() if k in form.changed_data})
        else:
            adopt_created(obj, faq_entry_create(assistant=obj.assistant, **fields))

    def delete_model(self, request: HttpRequest, obj: FaqEntry) -> None:
        faq_entry_delete(entry=obj)


@admin.register(KnowledgeDocument)
class KnowledgeDocumentAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Knowledge documents with their processing status (uploads and imports: dashboard Knowledge page or API).
    Read only here except the "Re-sync" action and delete (its passages go with it)."""

    list_display = [
        "id",
        "__str__",
        "assistant",
        "kind",
        "status",
        "progress",
        "status_reason",
        "chunk_count",
        "synced_at",
    ]
    list_filter = [("assistant", admin.RelatedOnlyFieldListFilter), "status", "kind"]
    search_fields = ["title", "source_url", "file_name"]
    list_select_related = ["assistant"]
    actions = ["resync_selected"]

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False  # uploads need the size cap and the queueing of the service: dashboard or API

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def get_queryset(self, request: HttpRequest) -> Any:
        return super().get_queryset(request).defer("upload")

    @admin.action(description="Re-sync selected documents")
    def resync_selected(self, request: HttpRequest, queryset: Any) -> None:
        queued, refused = 0, []
        for document in queryset:
            try:
                document_resync(document=document)
                queued += 1
            except ValidationError as exc:
                refused.append(f"{document}: {' '.join(exc.messages)}")
        self.message_user(request, f"{queued} document(s) queued for a re-sync.")
        for line in refused:
            self.message_user(request, line, level=messages.WARNING)

    def delete_model(self, request: HttpRequest, obj: KnowledgeDocument) -> None:
        document_delete(document=obj)
