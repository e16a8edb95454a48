"""Django admin for captain: assistants with their scenarios, FAQ and proposed routing examples, inbox links, credits and
run records.

The assistant page is the builder's map: counts and links to its scenarios, routing rows, FAQ and knowledge (each
also has its own page in the index, filtered by assistant), a picture of the routing graph drawn from the graph a
run uses (captain.routing.admin_graph), and "Try it in the playground" links. Its long settings and inlines are folded.

Tenant scoping comes from `helpdesk.admin.AccountScopedAdminMixin` (one rule for both apps): non-superuser
staff reach only accounts where they are admins. Assistants, scenarios and FAQ entries are written through the
services of each domain (the same calls the API makes); the domains' admin forms show their errors.

This module is the assistant's page, composed of every domain's inlines; each domain registers its own pages
in its `admin` module, imported below because Django's admin autodiscovery imports only `captain.admin`.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join

from captain.actions import admin as actions_admin
from captain.actions.admin import ShortcutInline
from captain.actions.models import Shortcut
from captain.actions.services.shortcuts import (
    SHORTCUT_FIELDS,
    shortcut_create,
    shortcut_delete,
    shortcut_update,
)
from captain.admin_support import (
    adopt_created,
    changelist_url,
    field_values,
    playground_url,
)
from captain.answering import admin as answering_admin
from captain.assistants import admin as assistants_admin
from captain.assistants.admin import SCENARIO_WRITABLE, ScenarioInline, scenario_team_save
from captain.assistants.forms import (
    AssistantAdminForm,
)
from captain.assistants.models import Assistant, Scenario
from captain.assistants.services.assistants import (
    ASSISTANT_FIELDS,
    assistant_create,
    assistant_delete,
    assistant_update,
)
from captain.assistants.services.scenarios import (
    scenario_create,
    scenario_delete,
    scenario_update,
)
from captain.copilot import admin as copilot_admin
from captain.evaluation import admin as evaluation_admin
from captain.knowledge import admin as knowledge_admin
from captain.knowledge.admin import FaqEntryInline
from captain.knowledge.models import FaqEntry, KnowledgeDocument
from captain.knowledge.services.faq import (
    FAQ_ENTRY_FIELDS,
    faq_entry_create,
    faq_entry_delete,
    faq_entry_update,
)
from captain.memory import admin as memory_admin
from captain.memory.admin import MemoryVariableInline
from captain.memory.models import MemoryVariable
from captain.routing import admin as routing_admin
from captain.routing.admin import (
    DraftedExampleInline,
    RoutingConfigInline,
    RoutingEdgeInline,
    RoutingNodeInline,
    RoutingRuleInline,
)
from captain.routing.admin_graph import routing_svg
from captain.routing.models import RoutingConfig, RoutingEdge, RoutingExample, RoutingNode, RoutingRule
from captain.routing.services.example_drafts import (
    routing_example_edit,
)
from helpdesk.admin import (
    AccountScopedAdminMixin,
)

DOMAIN_ADMINS = (
    actions_admin,
    answering_admin,
    assistants_admin,
    copilot_admin,
    evaluation_admin,
    knowledge_admin,
    memory_admin,
    routing_admin,
)

# The assistant's settings, grouped so the page opens short: only the identity and rules are unfolded.
ASSISTANT_FIELDSETS: list[tuple[str | None, list[str], bool]] = [
    (None, ["account", "name", "description", "product_name"], False),
    ("Instructions and rules", ["instructions", "response_guidelines", "guardrails"], False),
    (
        "Messages to customers",
        ["handoff_message", "resolution_message", "unknown_message", "off_topic_message"],
        True,
    ),
    ("Model", ["model_endpoint", "model", "temperature", "max_turns"], True),
    ("Knowledge", ["knowledge_mode", "when_unknown", "cite_links", "share_contact_details"], True),
    ("Follow-up suggestions", ["suggestions_enabled", "suggestions_persona"], True),
]


@admin.register(Assistant)
class AssistantAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    form = AssistantAdminForm
    list_display = ["id", "name", "account", "product_name", "model", "team_links", "created_at"]
    list_filter = [("account", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["name", "product_name"]
    inlines = [ScenarioInline, FaqEntryInline, MemoryVariableInline]
    routing_inlines = [
        RoutingConfigInline,
        RoutingNodeInline,
        RoutingEdgeInline,
        RoutingRuleInline,
        DraftedExampleInline,
    ]
    # A shortcut's tool must be one of the saved team's tools, so shortcuts too are added once it exists.
    saved_inlines = [ShortcutInline]

    def get_inlines(self, request: HttpRequest, obj: Assistant | None) -> list:
        # The graph refers to saved scenarios by key, so it is edited once the assistant exists.
        if obj is not None and obj.pk:
            return [*self.inlines, *self.routing_inlines, *self.saved_inlines]
        return list(self.inlines)

    def get_readonly_fields(self, request: HttpRequest, obj: Assistant | None = None) -> list[str]:
        # An assistant stays in its account: its FAQ entries, runs and ledger rows are that account's.
        if obj is not None and obj.pk:
            return ["account", "team_overview", "playground_link", "routing_picture"]
        return []

    def get_fieldsets(self, request: HttpRequest, obj: Assistant | None = None) -> list:
        listed = {name for _, names, _ in ASSISTANT_FIELDSETS for name in names}
        # A field added to ASSISTANT_FIELDS later still reaches the form (a field left out of every fieldset
        # would silently not be saved).
        extra = [name for name in ASSISTANT_FIELDS if name not in listed]
        fieldsets: list = []
        if obj is not None and obj.pk:
            fieldsets.append(
                ("The team at a glance", {"fields": ["team_overview", "playground_link", "routing_picture"]})
            )
        for title, names, folded in ASSISTANT_FIELDSETS:
            names = [*names, *extra] if title == "Instructions and rules" else names
            fieldsets.append((title, {"fields": names, "classes": ["collapse"] if folded else []}))
        return fieldsets

    @admin.display(description="Builder pages")
    def team_overview(self, obj: Assistant) -> str:
        return _team_links(obj)

    @admin.display(description="Builder pages")
    def team_links(self, obj: Assistant) -> str:
        return _team_links(obj)

    @admin.display(description="Playground")
    def playground_link(self, obj: Assistant) -> str:
        url = playground_url(obj)
        if not url:
            return "The playground is not installed on this site."
        return format_html('<a href="{}" class="playground-link">Try it in the playground</a>', url)

    @admin.display(description="Routing graph")
    def routing_picture(self, obj: Assistant) -> str:
        legend = (
            "Graph routing is on: each node decides with its mode; dashed boxes are global nodes (reachable "
            "from every node); double arrows go both ways."
            if RoutingConfig.objects.filter(assistant=obj).exists()
            else "Graph routing is off: the triage assistant hands over with its own model's handoff tools "
            "(the plain star); dashed boxes are reachable from every node."
        )
        return format_html(
            '<div class="routing-picture">{}<p class="help">{}</p></div>', routing_svg(obj), legend
        )

    def save_model(
        self, request: HttpRequest, obj: Assistant, form: AssistantAdminForm, change: bool
    ) -> None:
        fields = {name: form.cleaned_data[name] for name in ASSISTANT_FIELDS if name in form.cleaned_data}
        if change:
            assistant_update(assistant=obj, **{k: v for k, v in fields.items() if k in form.changed_data})
        else:
            adopt_created(obj, assistant_create(account_id=obj.account_id, **fields))

    def delete_model(self, request: HttpRequest, obj: Assistant) -> None:
        assistant_delete(assistant=obj)

    def save_formset(
        self, request: HttpRequest, form: AssistantAdminForm, formset: forms.BaseInlineFormSet, change: bool
    ) -> None:
        assistant: Assistant = form.instance
        formset.save(commit=False)  # fills new_objects / changed_objects / deleted_objects, writes nothing
        for obj in formset.deleted_objects:
            if isinstance(obj, Scenario):
                scenario_delete(scenario=obj)
            elif isinstance(obj, FaqEntry):
                faq_entry_delete(entry=obj)
            elif isinstance(obj, Shortcut):
                shortcut_delete(shortcut=obj)
            else:
                obj.delete()
        for obj, changed in formset.changed_objects:
            if isinstance(obj, Scenario):
                scenario_update(
                    scenario=obj, **field_values(obj, [n for n in SCENARIO_WRITABLE if n in changed])
                )
            elif isinstance(obj, FaqEntry):
                faq_entry_update(
                    entry=obj, **field_values(obj, [n for n in FAQ_ENTRY_FIELDS if n in changed])
                )
            elif isinstance(obj, RoutingExample):
                routing_example_edit(example=obj, text=obj.text)
            elif isinstance(obj, Shortcut):
                shortcut_update(
                    shortcut=obj, **field_values(obj, [n for n in SHORTCUT_FIELDS if n in changed])
                )
            else:
                obj.save()
        for obj in formset.new_objects:
            if isinstance(obj, Scenario):
                # The key was derived (or checked) for the whole formset in ScenarioInlineFormSet.clean.
                adopt_created(
                    obj,
                    scenario_create(assistant=assistant, key=obj.key, **field_values(obj, SCENARIO_WRITABLE)),
                )
            elif isinstance(obj, FaqEntry):
                adopt_created(
                    obj, faq_entry_create(assistant=assistant, **field_values(obj, FAQ_ENTRY_FIELDS))
                )
            elif isinstance(obj, Shortcut):
                adopt_created(obj, shortcut_create(assistant=assistant, **field_values(obj, SHORTCUT_FIELDS)))
            else:
                obj.save()
        for obj in [*formset.new_objects, *(o for o, _ in formset.changed_objects)]:
            if isinstance(obj, Scenario):
                scenario_team_save(obj)
        formset.save_m2m()


def _team_links(obj: Assistant) -> str:
    """ "Scenarios (4) · Routing · FAQ (12) · Knowledge (3) · Memory · Routing examples": each its own page,
    filtered to this assistant."""
    links = [
        ("Scenarios", Scenario, Scenario.objects.filter(assistant=obj).count()),
        ("Routing nodes", RoutingNode, RoutingNode.objects.filter(assistant=obj).count()),
        ("Edges", RoutingEdge, RoutingEdge.objects.filter(assistant=obj).count()),
        ("Rules", RoutingRule, RoutingRule.objects.filter(assistant=obj).count()),
        ("Routing examples", RoutingExample, RoutingExample.objects.filter(assistant=obj).count()),
        ("FAQ", FaqEntry, FaqEntry.objects.filter(assistant=obj).count()),
        ("Knowledge", KnowledgeDocument, KnowledgeDocument.objects.filter(assistant=obj).count()),
        ("Memory", MemoryVariable, MemoryVariable.objects.filter(assistant=obj).count()),
    ]
    return format_html(
        '<span class="team-links">{}</span>',
        format_html_join(
            " \u00b7 ",
            '<a href="{}" data-page="{}">{} ({})</a>',
            (
                (changelist_url(model, assistant__id__exact=obj.pk), model._meta.model_name, label, count)
                for label, model, count in links
            ),
        ),
    )
