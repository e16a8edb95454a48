"""Admin pages of memory variables."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.http import HttpRequest

from captain.memory.models import MemoryVariable
from captain.memory.services.memory_variables import MEMORY_VARIABLE_FIELDS, memory_variable_clean
from helpdesk.admin import (
    AccountScopedAdminMixin,
    AccountScopedInlineMixin,
)


class MemoryVariableAdminForm(forms.ModelForm):
    """The API's checks (captain.memory.services.memory_variables): a choice variable needs its choices, a default of
    the variable's kind, a lowercase name."""

    class Meta:
        model = MemoryVariable
        fields = ["assistant", *MEMORY_VARIABLE_FIELDS]

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        if self.errors:
            return cleaned
        candidate = MemoryVariable(**{name: cleaned.get(name) for name in MEMORY_VARIABLE_FIELDS})
        candidate.choices = candidate.choices or []
        try:
            memory_variable_clean(candidate)
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                self.add_error(field if field in self.fields else None, errors)
            return cleaned
        cleaned.update(
            {name: getattr(candidate, name) for name in ("name", "description", "choices", "default")}
        )
        return cleaned


class MemoryVariableInline(AccountScopedInlineMixin, admin.StackedInline):
    model = MemoryVariable
    form = MemoryVariableAdminForm
    extra = 0
    classes = ["collapse"]
    fields = list(MEMORY_VARIABLE_FIELDS)


@admin.register(MemoryVariable)
class MemoryVariableAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """What each assistant remembers about customers and conversations; also editable on the assistant's page."""

    form = MemoryVariableAdminForm
    list_display = [
        "name",
        "assistant",
        "kind",
        "scope",
        "writable_by_ai",
        "writable_by_agents",
        "writable_by_api",
    ]
    list_filter = [("assistant", admin.RelatedOnlyFieldListFilter), "kind", "scope"]
    list_select_related = ["assistant"]
    search_fields = ["name", "description"]

    def get_readonly_fields(self, request: HttpRequest, obj: MemoryVariable | None = None) -> list[str]:
        # Its stored values belong to the assistant's account: a variable stays with its assistant.
        return ["assistant"] if obj is not None and obj.pk else []
