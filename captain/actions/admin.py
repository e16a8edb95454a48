"""Admin pages of custom tools, shortcuts, plans and confirmations."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import path

from captain.actions.models import CustomTool, Plan, Shortcut, ToolConfirmation
from captain.actions.services.custom_tools import (
    CUSTOM_TOOL_FIELDS,
    custom_tool_delete,
    custom_tool_errors,
    custom_tool_save,
    custom_tool_test_call,
)
from captain.actions.services.shortcuts import (
    SHORTCUT_FIELDS,
    shortcut_errors,
)
from captain.admin_support import (
    field_values,
)
from captain.assistants.services.destinations import SECRET_DROPPED_MESSAGE
from helpdesk.admin import (
    AccountScopedAdminMixin,
    AccountScopedInlineMixin,
)


class ShortcutAdminForm(forms.ModelForm):
    """The API's checks (captain.actions.services.shortcuts) shown on the row: parameters' shape, the tool among the
    team's tools with its required arguments covered, templates over declared parameters only."""

    class Meta:
        model = Shortcut
        fields = list(SHORTCUT_FIELDS)

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        if self.errors:
            return cleaned
        instance = self.instance
        fields = {name: cleaned.get(name, getattr(instance, name)) for name in SHORTCUT_FIELDS}
        assistant = instance.assistant if instance.assistant_id else None
        for name, problems in shortcut_errors(assistant=assistant, fields=fields, shortcut=instance).items():
            self.add_error(name if name in self.fields else None, problems)
        return cleaned


class ShortcutInline(AccountScopedInlineMixin, admin.StackedInline):
    """Quick commands customers type (`/track 12345`); Telegram bots list them in their command menu."""

    model = Shortcut
    form = ShortcutAdminForm
    extra = 0
    classes = ["collapse"]
    fields = list(SHORTCUT_FIELDS)


class CustomToolAdminForm(forms.ModelForm):
    """A custom HTTP tool. The secret is write-only: typed once, stored encrypted, never shown again."""

    secret = forms.CharField(
        required=False,
        strip=True,
        widget=forms.PasswordInput(render_value=False),
        label="Secret",
        help_text="Bearer token, password (basic) or API key; stored encrypted. Blank: keep the stored one.",
    )
    clear_secret = forms.BooleanField(required=False, label="Remove the stored secret")

    class Meta:
        model = CustomTool
        fields = ["account", *CUSTOM_TOOL_FIELDS]
        widgets = {"url_template": forms.TextInput(attrs={"size": 100})}

    def clean(self) -> dict[str, Any]:
        super().clean()  # a ModelForm's clean() returns its cleaned_data, typed as Optional for overrides
        cleaned = self.cleaned_data
        account = cleaned.get("account") or getattr(self.instance, "account", None)
        if account is None:
            return cleaned
        # The service's rules on a copy carrying the submitted values (the form's instance is filled later).
        candidate = CustomTool(pk=self.instance.pk, account=account)
        for name in CUSTOM_TOOL_FIELDS:
            setattr(candidate, name, cleaned.get(name, getattr(self.instance, name)))
        for name, problems in custom_tool_errors(account_id=account.pk, tool=candidate).items():
            for problem in problems:
                self.add_error(name if name in self.fields else None, problem)
        return cleaned


class CustomToolTestCallForm(forms.Form):
    arguments = forms.JSONField(
        initial=dict,
        required=False,
        widget=forms.Textarea(attrs={"rows": 8, "cols": 80}),
        help_text='The arguments as JSON, e.g. {"order_id": "1042"}. The request is really sent.',
    )

    def clean_arguments(self) -> dict:
        value = self.cleaned_data.get("arguments") or {}
        if not isinstance(value, dict):
            raise ValidationError("A JSON object of arguments.")
        return value


@admin.register(CustomTool)
class CustomToolAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """An account's HTTP tools; the "Test call" page sends one request and shows it (credentials redacted)
    with the response or the error."""

    form = CustomToolAdminForm
    list_display = [
        "name",
        "account",
        "method",
        "url_template",
        "auth_type",
        "confirms",
        "has_secret",
        "enabled",
    ]
    list_filter = ["method", "enabled"]
    search_fields = ["name", "description"]
    change_form_template = "captain/admin/custom_tool_change_form.html"

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        if "secret_encrypted" in lookup.split("__"):
            return False  # a filter on the ciphertext is no business of anyone's
        return super().lookup_allowed(lookup, value, request)

    @admin.display(boolean=True, description="Asks the customer")
    def confirms(self, obj: CustomTool) -> bool:
        return obj.needs_confirmation

    @admin.display(boolean=True, description="Secret stored")
    def has_secret(self, obj: CustomTool) -> bool:
        return bool(obj.secret_encrypted)

    def get_readonly_fields(self, request: HttpRequest, obj: CustomTool | None = None) -> list[str]:
        return ["account"] if obj is not None and obj.pk else []

    def save_model(
        self, request: HttpRequest, obj: CustomTool, form: CustomToolAdminForm, change: bool
    ) -> None:
        secret = form.cleaned_data.get("secret") or None
        if form.cleaned_data.get("clear_secret"):
            secret = ""
        had_secret = bool(obj.secret_encrypted)
        custom_tool_save(
            account=obj.account, fields=field_values(obj, CUSTOM_TOOL_FIELDS), secret=secret, tool=obj
        )
        if had_secret and secret is None and not obj.secret_encrypted:
            self.message_user(request, SECRET_DROPPED_MESSAGE, level=messages.WARNING)

    def delete_model(self, request: HttpRequest, obj: CustomTool) -> None:
        custom_tool_delete(tool=obj)

    def get_urls(self) -> list:
        urls = [
            path(
                "<path:object_id>/test-call/",
                self.admin_site.admin_view(self.test_call_view),
                name="captain_customtool_test_call",
            )
        ]
        return urls + super().get_urls()

    def test_call_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        tool = self.get_object(request, object_id)  # scoped to the accounts this user administers
        if tool is None or not self.has_change_permission(request, tool):
            raise Http404("No such tool.")
        record = None
        form = CustomToolTestCallForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            record = custom_tool_test_call(tool, form.cleaned_data["arguments"])
        context = {
            **self.admin_site.each_context(request),
            "title": f"Test call: {tool.name}",
            "opts": self.model._meta,
            "original": tool,
            "form": form,
            "record": record,
            "record_json": json.dumps(record, indent=2, ensure_ascii=False) if record else "",
            "changes_something": tool.changes_something,
        }
        return TemplateResponse(request, "captain/admin/custom_tool_test_call.html", context)


@admin.register(Plan)
class PlanAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Planning-mode todo lists by conversation (read only: the runs own them)."""

    read_only = True
    list_display = ["id", "conversation", "agent_key", "status", "tool_calls", "updated_at"]
    list_filter = ["status"]
    list_select_related = ["conversation"]

    def get_readonly_fields(self, request: HttpRequest, obj: Plan | None = None) -> list[str]:
        return [f.name for f in Plan._meta.concrete_fields]


@admin.register(ToolConfirmation)
class ToolConfirmationAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Calls held for the customer's confirmation and what became of them (read only: an answer in the
    conversation settles them)."""

    read_only = True
    list_display = ["id", "conversation", "tool_name", "status", "created_at", "decided_at"]
    list_filter = ["status", "tool_name"]
    list_select_related = ["conversation"]

    def get_readonly_fields(self, request: HttpRequest, obj: ToolConfirmation | None = None) -> list[str]:
        return [f.name for f in ToolConfirmation._meta.concrete_fields]
