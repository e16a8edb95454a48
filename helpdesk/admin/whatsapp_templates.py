"""Admin of WhatsApp templates: entered by hand or synced from Meta (the "Sync templates" action)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

from helpdesk.models import Inbox, WhatsAppTemplate
from helpdesk.services.whatsapp_templates import SyncFailed, whatsapp_templates_sync

from .scoping import AccountScopedAdminMixin, admin_account_ids, scoped_queryset


@admin.register(WhatsAppTemplate)
class WhatsAppTemplateAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    list_display = ["name", "language", "inbox", "category", "status", "variables", "updated_at"]
    list_filter = ["status", ("inbox", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["name", "body"]
    fields = ["inbox", "name", "language", "category", "status", "header_text", "body", "variables"]
    readonly_fields = ["variables"]
    actions = ["sync_templates"]

    def formfield_for_foreignkey(self, db_field, request, **kwargs):  # type: ignore[no-untyped-def]
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if db_field.name == "inbox" and field is not None and field.queryset is not None:
            # Only a WhatsApp inbox holds templates: offer no other.
            field.queryset = field.queryset.filter(channel_type=Inbox.ChannelType.WHATSAPP)
        return field

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        # Django runs an action only on ticked rows; the first sync has no rows to tick. A sync with none ticked
        # gets a selection matching no row, and the action then syncs every WhatsApp inbox the admin holds.
        syncing = request.method == "POST" and request.POST.get("action") == "sync_templates"
        if syncing and not request.POST.getlist(helpers.ACTION_CHECKBOX_NAME):
            post = request.POST.copy()
            post.setlist(helpers.ACTION_CHECKBOX_NAME, ["0"])
            request.POST = post  # type: ignore[assignment]
        return super().changelist_view(request, extra_context)

    @admin.action(description="Sync templates")
    def sync_templates(self, request: HttpRequest, queryset: QuerySet[WhatsAppTemplate]) -> None:
        inboxes = Inbox.objects.filter(channel_type=Inbox.ChannelType.WHATSAPP)
        if not request.user.is_superuser:
            inboxes = scoped_queryset(Inbox, admin_account_ids(request)).filter(
                channel_type=Inbox.ChannelType.WHATSAPP
            )
        inbox_ids = set(queryset.values_list("inbox_id", flat=True))
        if inbox_ids:
            inboxes = inboxes.filter(pk__in=inbox_ids)
        for inbox in inboxes.order_by("pk"):
            try:
                result = whatsapp_templates_sync(inbox=inbox)
            except SyncFailed as exc:
                self.message_user(request, f"{inbox.name}: {exc}", messages.ERROR)
                continue
            self.message_user(
                request, f"{inbox.name}: {result.saved} approved templates saved, {result.skipped} skipped."
            )
