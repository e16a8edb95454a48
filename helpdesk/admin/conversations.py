"""Admin of contacts, labels, conversations and messages (messages read only)."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from helpdesk.models import Contact, ContactInbox, Conversation, Delivery, Label, Message

from .scoping import AccountScopedAdminMixin, AccountScopedInlineMixin


class ContactInboxInline(AccountScopedInlineMixin, admin.TabularInline):
    model = ContactInbox
    extra = 0
    read_only = True
    # Tuples: a list would be inferred as `fields`' wider element type, which readonly_fields does not take.
    fields = ("inbox", "source_id")
    readonly_fields = fields


@admin.register(Contact)
class ContactAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    list_display = ["id", "name", "email", "account", "created_at"]
    search_fields = ["name", "email"]
    inlines = [ContactInboxInline]


@admin.register(Label)
class LabelAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    list_display = ["name", "account"]
    search_fields = ["name"]


RECENT_MESSAGES = 50


def delivery_status_display(message: Message) -> str:
    """The outbox state from the message's `Delivery` (select it with the message); notes have none."""
    delivery: Delivery | None = getattr(message, "delivery", None)
    return delivery.get_status_display() if delivery is not None else "Not sent"


class RecentMessagesFormSet(forms.BaseInlineFormSet):
    """Only the latest RECENT_MESSAGES messages: a long thread must not make the change page huge."""

    def get_queryset(self) -> QuerySet:
        if not hasattr(self, "_recent"):
            everything = super().get_queryset()
            recent_ids = list(
                everything.order_by("-created_at", "-id").values_list("pk", flat=True)[:RECENT_MESSAGES]
            )
            self._recent = (
                everything.filter(pk__in=recent_ids).select_related("delivery").order_by("created_at", "id")
            )
        return self._recent


class MessageInline(AccountScopedInlineMixin, admin.TabularInline):
    model = Message
    formset = RecentMessagesFormSet
    extra = 0
    read_only = True
    verbose_name_plural = f"Messages (latest {RECENT_MESSAGES})"
    fields = (
        "created_at",
        "message_type",
        "private",
        "sender_type",
        "ai_agent_name",
        "content",
        "delivery_status",
    )
    readonly_fields = fields  # a tuple, as in ContactInboxInline
    can_delete = False
    show_change_link = True

    @admin.display(description="Delivery status")
    def delivery_status(self, message: Message) -> str:
        return delivery_status_display(message)


@admin.register(Conversation)
class ConversationAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    list_display = ["id", "status", "priority", "inbox", "contact", "assignee", "last_activity_at"]
    # RelatedOnly: the inbox filter lists only inboxes of conversations this user can see.
    list_filter = ["status", "priority", ("inbox", admin.RelatedOnlyFieldListFilter)]
    list_select_related = ["inbox", "contact", "assignee"]
    search_fields = ["contact__name", "contact__email"]
    superuser_only_add = True  # conversations come from channels
    fields = [
        "account",
        "inbox",
        "contact",
        "status",
        "priority",
        "assignee",
        "labels",
        "ai_agent_key",
        "waiting_since",
        "escalation_reason",
        "last_activity_at",
        "created_at",
    ]
    # Status changes have side effects (activity line, AI hand-back): make them in the dashboard or the API.
    readonly_fields = [
        "account",
        "inbox",
        "contact",
        "status",
        "ai_agent_key",
        "waiting_since",
        "escalation_reason",
        "last_activity_at",
        "created_at",
    ]
    inlines = [MessageInline]


@admin.register(Message)
class MessageAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Read-only: messages are written by channels, people and the AI through services."""

    read_only = True
    list_display = [
        "id",
        "conversation",
        "message_type",
        "private",
        "sender_type",
        "delivery_status",
        "created_at",
    ]
    list_filter = ["message_type", "delivery__status"]
    list_select_related = ["conversation", "delivery"]
    search_fields = ["content"]

    @admin.display(description="Delivery status")
    def delivery_status(self, message: Message) -> str:
        return delivery_status_display(message)

    def get_readonly_fields(self, request: HttpRequest, obj: Message | None = None) -> list[str]:
        return [f.name for f in Message._meta.concrete_fields]
