"""Admin pages of scenarios, model endpoints and inbox links (the assistant page is captain.admin)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest
from django.utils.html import format_html

from captain.admin_support import (
    admin_scope,
    adopt_created,
    playground_url,
)
from captain.assistants.forms import (
    ModelEndpointAdminForm,
    ScenarioAdminForm,
    ScenarioInlineFormSet,
)
from captain.assistants.models import AssistantInbox, ModelEndpoint, Scenario
from captain.assistants.services.destinations import SECRET_DROPPED_MESSAGE
from captain.assistants.services.scenarios import (
    SCENARIO_FIELDS,
    ScenarioFields,
    scenario_create,
    scenario_delete,
    scenario_update,
)
from helpdesk.admin import (
    AccountScopedAdminMixin,
    AccountScopedInlineMixin,
    scoped_queryset,
)
from helpdesk.models import Team

if TYPE_CHECKING:
    from django.contrib.admin.options import _FieldGroups  # django-stubs' type of a page's field names

SCENARIO_WRITABLE = tuple(ScenarioFields.__annotations__)


class ScenarioInline(AccountScopedInlineMixin, admin.StackedInline):
    model = Scenario
    form = ScenarioAdminForm
    formset = ScenarioInlineFormSet
    extra = 0
    classes = ["collapse"]
    show_change_link = True


def scenario_team_save(scenario: Scenario) -> None:
    """The form's handoff team (a relation the form names `handoff_team`) saved through the scenario service,
    which checks it belongs to the assistant's account, after the service saved the rest."""
    scenario_update(scenario=scenario, handoff_team_id=scenario.handoff_team_id)


@admin.register(Scenario)
class ScenarioAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Scenarios on their own pages (also editable on their assistant's page). Written through the scenario
    services, like the API."""

    form = ScenarioAdminForm
    list_display = ["title", "key", "assistant", "mode", "enabled", "handoff_team", "try_it"]
    list_filter = [("assistant", admin.RelatedOnlyFieldListFilter), "enabled", "mode"]
    list_select_related = ["assistant", "handoff_team"]
    search_fields = ["title", "key", "description"]

    def get_fields(self, request: HttpRequest, obj: Scenario | None = None) -> _FieldGroups:
        fields: _FieldGroups = ["assistant", *SCENARIO_FIELDS, "handoff_team"]
        return [*fields, "playground_link"] if obj is not None and obj.pk else fields

    def get_readonly_fields(self, request: HttpRequest, obj: Scenario | None = None) -> list[str]:
        # A scenario's key, tools and conversations belong to its assistant: it never moves.
        return ["assistant", "playground_link"] if obj is not None and obj.pk else []

    def get_form(
        self, request: HttpRequest, obj: Scenario | None = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        form_class = super().get_form(request, obj, change=change, **kwargs)
        account_id = obj.assistant.account_id if obj is not None and obj.pk else None

        class ScopedScenarioForm(form_class):  # type: ignore[valid-type,misc]  # subclasses the form class Django built for this request (a variable)
            def __init__(self, *args: Any, **kw: Any) -> None:
                super().__init__(*args, **kw)
                self.offer_tools_of(account_id)
                if account_id is None and "handoff_team" in self.fields:
                    # A new scenario: any team of the accounts this user administers; clean() then refuses a
                    # team of another account than the chosen assistant's.
                    self.fields["handoff_team"].queryset = scoped_queryset(Team, admin_scope(request))

        return ScopedScenarioForm

    @admin.display(description="Playground")
    def try_it(self, obj: Scenario) -> str:
        url = playground_url(obj.assistant, obj.key)
        return format_html('<a href="{}">Try it</a>', url) if url else ""

    @admin.display(description="Playground")
    def playground_link(self, obj: Scenario) -> str:
        url = playground_url(obj.assistant, obj.key)
        if not url:
            return "The playground is not installed on this site."
        return format_html(
            '<a href="{}" class="playground-link">Try it in the playground</a> (starts here)', url
        )

    def save_model(self, request: HttpRequest, obj: Scenario, form: ScenarioAdminForm, change: bool) -> None:
        fields = {name: form.cleaned_data[name] for name in SCENARIO_WRITABLE if name in form.cleaned_data}
        if change:
            scenario_update(scenario=obj, **{k: v for k, v in fields.items() if k in form.changed_data})
        else:
            key = form.cleaned_data.get("key") or None
            adopt_created(obj, scenario_create(assistant=obj.assistant, key=key, **fields))
        obj.handoff_team = form.cleaned_data.get("handoff_team")
        scenario_team_save(obj)

    def delete_model(self, request: HttpRequest, obj: Scenario) -> None:
        scenario_delete(scenario=obj)


@admin.register(ModelEndpoint)
class ModelEndpointAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """An account's own OpenAI-compatible endpoint (its URL, its key). The server's endpoints are settings."""

    form = ModelEndpointAdminForm
    # The form's fields plus which models use the text tool protocol (`manage.py captain_probe_tools`).
    fields = [
        "account",
        "name",
        "base_url",
        "model_names",
        "vision_models",
        "text_tool_models",
        "new_api_key",
    ]
    list_display = ["name", "account", "base_url", "text_tool_models", "created_at"]
    search_fields = ["name"]

    def save_model(
        self, request: HttpRequest, obj: ModelEndpoint, form: ModelEndpointAdminForm, change: bool
    ) -> None:
        super().save_model(request, obj, form, change)
        if getattr(form, "api_key_dropped", False):
            self.message_user(request, SECRET_DROPPED_MESSAGE, level=messages.WARNING)


@admin.register(AssistantInbox)
class AssistantInboxAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    list_display = ["assistant", "inbox"]
    list_select_related = ["assistant", "inbox"]
