"""Admin of accounts (with their people) and of the custom attribute definitions."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.http import HttpRequest

from helpdesk.models import Account, CustomAttributeDefinition, Membership
from helpdesk.services.attributes import attribute_definition_clean

from .scoping import AccountScopedAdminMixin, AccountScopedInlineMixin


class MembershipInline(AccountScopedInlineMixin, admin.TabularInline):
    """People of the account: role, and what automatic assignment and notifications need to know of them."""

    model = Membership
    extra = 0
    fields = [
        "user",
        "role",
        "availability",
        "max_open_assignments",
        "email_notifications",
        "escalation_notifications",
    ]


@admin.register(Account)
class AccountAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    list_display = ["id", "name", "time_zone", "created_at"]
    search_fields = ["name"]
    inlines = [MembershipInline]
    fieldsets = [
        (None, {"fields": ["name", "time_zone"]}),
        (
            "Auto-resolve",
            {
                "fields": ["auto_resolve_ai_after_minutes", "auto_resolve_waiting_after_hours"],
                "description": "Quiet conversations are closed (or, when the AI judges people are needed, handed "
                "over) after these times. Leave a field empty to turn that rule off.",
            },
        ),
    ]
    # Tenants are created and removed by the site operator.
    superuser_only_add = True
    superuser_only_delete = True


class AttributeDefinitionAdminForm(forms.ModelForm):
    """The same checks as the API's (helpdesk.services.attributes): a list needs its choices, other kinds have
    none, the key is lowercase."""

    class Meta:
        model = CustomAttributeDefinition
        fields = ["account", "applies_to", "key", "label", "description", "kind", "choices"]

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        if self.errors:
            return cleaned
        candidate = CustomAttributeDefinition(
            account_id=getattr(cleaned.get("account"), "pk", None) or self.instance.account_id,
            applies_to=cleaned.get("applies_to") or self.instance.applies_to,
            key=cleaned.get("key") or self.instance.key,
            label=cleaned.get("label", ""),
            description=cleaned.get("description", ""),
            kind=cleaned.get("kind", ""),
            choices=cleaned.get("choices") or [],
        )
        try:
            attribute_definition_clean(candidate)
        except ValidationError as exc:
            for field, messages_ in exc.message_dict.items():
                self.add_error(field if field in self.fields else None, messages_)
            return cleaned
        cleaned["label"], cleaned["choices"] = candidate.label, candidate.choices
        return cleaned


@admin.register(CustomAttributeDefinition)
class CustomAttributeDefinitionAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Typed attributes of contacts and conversations; the values are edited in the dashboard or the API."""

    form = AttributeDefinitionAdminForm
    list_display = ["key", "label", "applies_to", "kind", "account"]
    list_filter = ["applies_to", "kind"]
    search_fields = ["key", "label"]

    def get_readonly_fields(
        self, request: HttpRequest, obj: CustomAttributeDefinition | None = None
    ) -> list[str]:
        # Values are stored under the key: renaming it or moving it to another account would orphan them.
        return ["account", "applies_to", "key"] if obj is not None and obj.pk else []
