"""Admin pages of the routing graph and its examples."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import Model
from django.http import HttpRequest
from django.utils.html import format_html

from captain.admin_support import (
    admin_scope,
    by_assistant,
    playground_url,
)
from captain.routing.forms import (
    RouterChoiceForm,
    RoutingEdgeInlineFormSet,
    RoutingNodeAdminForm,
    RoutingNodeInlineFormSet,
    RoutingRuleInlineFormSet,
)
from captain.routing.models import RoutingConfig, RoutingEdge, RoutingExample, RoutingNode, RoutingRule
from captain.routing.services.example_drafts import (
    drafted_examples_adopt,
    routing_example_edit,
    routing_example_text_errors,
)
from captain.routing.services.routing_examples import review_examples
from helpdesk.admin import (
    AccountScopedAdminMixin,
    AccountScopedInlineMixin,
    scoped_queryset,
)
from helpdesk.models import Team


class RoutingConfigInline(AccountScopedInlineMixin, admin.StackedInline):
    """Present: graph routing is on (docs/routing.md). Absent: the plain star of handoff tools."""

    model = RoutingConfig
    form = RouterChoiceForm
    extra = 0
    max_num = 1
    classes = ["collapse"]
    readonly_fields = ["drafted_phrases"]

    @admin.display(description="Drafted phrases")
    def drafted_phrases(self, obj: RoutingConfig) -> str:
        """What the product's own check found (captain.routing.services.draft_check), in words."""
        check = obj.drafts_check or {}
        if not check:
            return "Not checked yet: drafted phrases are suggestions until a person accepts them."
        if not check.get("drafts"):
            return "No unreviewed drafted phrases to check."
        verdict = "in use" if check.get("helps") else "suggestions only (they did not help)"
        return (
            f"{verdict}. Checked {check.get('checked_at', '')[:16].replace('T', ' ')} on "
            f"{check.get('labelled', 0)} messages whose team is known: {check.get('right_with', 0)} routed "
            f"right with the drafts, {check.get('right_without', 0)} without."
        )

    # The default plural would append an "s" to the whole sentence.
    verbose_name = "routing settings (graph routing is on when this exists)"
    verbose_name_plural = "routing settings (graph routing is on when they exist)"


class RoutingNodeInline(AccountScopedInlineMixin, admin.StackedInline):
    model = RoutingNode
    form = RoutingNodeAdminForm
    formset = RoutingNodeInlineFormSet
    extra = 0
    classes = ["collapse"]
    show_change_link = True
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
        "handoff_team",
    ]


class RoutingEdgeInline(AccountScopedInlineMixin, admin.TabularInline):
    model = RoutingEdge
    formset = RoutingEdgeInlineFormSet
    extra = 0
    classes = ["collapse"]
    fields = ["source", "target"]


class RoutingRuleInline(AccountScopedInlineMixin, admin.TabularInline):
    model = RoutingRule
    formset = RoutingRuleInlineFormSet
    extra = 0
    classes = ["collapse"]
    fields = ["node", "position", "match", "value", "target"]


class RoutingExampleTextForm(forms.ModelForm):
    """Only a proposed example's text is edited by people; the same check as the API's (captain.services.
    example_drafts), so a duplicate on the node is a form error, not a failed save."""

    class Meta:
        model = RoutingExample
        fields = ["text"]

    def clean_text(self) -> str:
        text = self.cleaned_data["text"]
        errors = routing_example_text_errors(example=self.instance, text=text)
        if errors:
            raise ValidationError(errors)
        return " ".join(text.split())


class DraftedExampleInline(AccountScopedInlineMixin, admin.TabularInline):
    """The model's drafted example messages of every scenario's node (the router uses one once it is accepted;
    unreviewed ones only with CAPTAIN["ROUTING_UNREVIEWED_DRAFTS"]). Editing a suggestion accepts it; accept,
    reject and adopt them on the routing examples page."""

    model = RoutingExample
    form = RoutingExampleTextForm
    extra = 0
    classes = ["collapse"]
    can_delete = False
    fields = ["key", "text", "status", "created_at"]
    readonly_fields = ["key", "status", "created_at"]
    verbose_name = "drafted routing example"
    verbose_name_plural = "drafted routing examples (used for a node until the builder writes its examples)"

    def get_queryset(self, request: HttpRequest) -> Any:
        return (
            super().get_queryset(request).filter(source=RoutingExample.Source.DRAFTED).order_by("key", "id")
        )

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False  # drafts come from the model; the builder's own examples go on the routing node


class RoutingRowAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Routing rows on their own pages, filtered by assistant. The rules of a whole graph (keys naming this
    assistant's scenarios, no duplicates) are checked on the assistant page, which saves them together; here the
    same per-row checks run through the assistant's graph validation."""

    list_filter = [("assistant", admin.RelatedOnlyFieldListFilter)]
    list_select_related = ["assistant"]

    def get_readonly_fields(self, request: HttpRequest, obj: Model | None = None) -> list[str]:
        return ["assistant"] if obj is not None and obj.pk else []

    def get_form(
        self, request: HttpRequest, obj: Model | None = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        form_class = super().get_form(request, obj, change=change, **kwargs)
        key_fields = self.key_fields

        class CheckedForm(form_class):  # type: ignore[valid-type,misc]  # subclasses the form class Django built for this request (a variable)
            def clean(self) -> dict[str, Any]:
                cleaned = super().clean()
                assistant = cleaned.get("assistant") or (
                    self.instance.assistant if self.instance.assistant_id else None
                )
                if assistant is None:
                    return cleaned
                from captain.routing.services.routing import routing_reference_errors

                for name, target in key_fields:
                    if name in cleaned:
                        for error in routing_reference_errors(
                            assistant=assistant, where=name, key=cleaned.get(name) or "", target=target
                        ):
                            self.add_error(name, error)
                return cleaned

        return CheckedForm

    key_fields: tuple[tuple[str, bool], ...] = ()


@admin.register(RoutingNode)
class RoutingNodeAdmin(RoutingRowAdmin):
    form = RoutingNodeAdminForm
    list_display = ["key", "assistant", "mode", "timing", "is_global", "handoff_team", "try_it"]
    list_filter = [("assistant", admin.RelatedOnlyFieldListFilter), "mode", "is_global"]
    list_select_related = ["assistant", "handoff_team"]
    search_fields = ["key", "rule_prompt"]
    key_fields = (("key", False),)
    fields = [
        "assistant",
        "key",
        "mode",
        "timing",
        "history_rounds",
        "rule_prompt",
        "is_global",
        "examples",
        "router_endpoint",
        "router_model",
        "handoff_team",
    ]

    def get_form(
        self, request: HttpRequest, obj: Model | None = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        form_class = super().get_form(request, obj, change=change, **kwargs)

        class TeamScopedForm(form_class):  # type: ignore[valid-type,misc]  # subclasses the form class Django built for this request (a variable)
            def __init__(self, *args: Any, **kw: Any) -> None:
                super().__init__(*args, **kw)
                if not self.instance.assistant_id and "handoff_team" in self.fields:
                    self.fields["handoff_team"].queryset = scoped_queryset(Team, admin_scope(request))

        return TeamScopedForm

    @admin.display(description="Playground")
    def try_it(self, obj: RoutingNode) -> str:
        url = playground_url(obj.assistant, obj.key)
        return format_html('<a href="{}">Try it</a>', url) if url else ""


@admin.register(RoutingEdge)
class RoutingEdgeAdmin(RoutingRowAdmin):
    list_display = ["__str__", "assistant", "source", "target"]
    search_fields = ["source", "target"]
    fields = ["assistant", "source", "target"]
    key_fields = (("source", False), ("target", True))

    def get_form(
        self, request: HttpRequest, obj: Model | None = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        form_class = super().get_form(request, obj, change=change, **kwargs)

        class EdgeForm(form_class):  # type: ignore[valid-type,misc]  # subclasses the form class Django built for this request (a variable)
            def clean(self) -> dict[str, Any]:
                cleaned = super().clean()
                if cleaned.get("source") and cleaned.get("source") == cleaned.get("target"):
                    self.add_error("target", "A node cannot route to itself.")
                return cleaned

        return EdgeForm


@admin.register(RoutingRule)
class RoutingRuleAdmin(RoutingRowAdmin):
    list_display = ["__str__", "assistant", "node", "position", "match", "target"]
    list_filter = [("assistant", admin.RelatedOnlyFieldListFilter), "match"]
    search_fields = ["node", "value", "target"]
    fields = ["assistant", "node", "position", "match", "value", "target"]
    key_fields = (("node", False), ("target", True))

    def get_form(
        self, request: HttpRequest, obj: Model | None = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        form_class = super().get_form(request, obj, change=change, **kwargs)

        class RuleForm(form_class):  # type: ignore[valid-type,misc]  # subclasses the form class Django built for this request (a variable)
            def clean(self) -> dict[str, Any]:
                cleaned = super().clean()
                if cleaned.get("match") == "regex":
                    import re

                    try:
                        re.compile(cleaned.get("value") or "")
                    except re.error as exc:
                        self.add_error("value", f"Invalid regular expression: {exc}")
                return cleaned

        return RuleForm


@admin.register(RoutingExample)
class RoutingExampleAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Example messages proposed for routing nodes: drafted by the assistant's model, or learned from
    corrections. Only the text is edited here (editing a drafted suggestion accepts it); the actions accept,
    reject, or adopt drafted ones as the builder's own examples of their node."""

    form = RoutingExampleTextForm
    list_display = ["id", "assistant", "key", "text", "source", "status", "signal", "created_at"]
    list_filter = [("assistant", admin.RelatedOnlyFieldListFilter), "source", "status", "signal"]
    search_fields = ["text"]
    list_select_related = ["assistant"]
    actions = ["accept_selected", "reject_selected", "adopt_selected"]
    fields = [
        "assistant",
        "key",
        "text",
        "source",
        "status",
        "signal",
        "routed_to",
        "drafted_from",
        "conversation",
        "message",
        "created_at",
        "reviewed_at",
    ]
    readonly_fields = [
        "assistant",
        "key",
        "source",
        "status",
        "signal",
        "routed_to",
        "drafted_from",
        "conversation",
        "message",
        "created_at",
        "reviewed_at",
    ]

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False  # proposed by the model or by corrections; the builder's own go on the routing node

    def _review(self, request: HttpRequest, queryset: Any, *, accept: bool) -> None:
        changed = sum(
            review_examples(assistant=assistant, ids=ids, accept=accept)
            for assistant, ids in by_assistant(queryset)
        )
        self.message_user(request, f"{changed} routing example(s) {'accepted' if accept else 'rejected'}.")

    @admin.action(description="Accept selected examples", permissions=["change"])
    def accept_selected(self, request: HttpRequest, queryset: Any) -> None:
        self._review(request, queryset, accept=True)

    @admin.action(description="Reject selected examples", permissions=["change"])
    def reject_selected(self, request: HttpRequest, queryset: Any) -> None:
        self._review(request, queryset, accept=False)

    @admin.action(
        description="Adopt selected drafted examples as the builder's examples", permissions=["change"]
    )
    def adopt_selected(self, request: HttpRequest, queryset: Any) -> None:
        drafted = queryset.filter(source=RoutingExample.Source.DRAFTED)
        skipped = queryset.count() - drafted.count()
        adopted, refused = 0, []
        for assistant, ids in by_assistant(drafted):
            result = drafted_examples_adopt(assistant=assistant, ids=ids)
            adopted += result.adopted
            refused += result.refused
        message = f"{adopted} drafted example(s) added to their node's examples and accepted."
        if skipped:
            message += f" {skipped} correction(s) skipped: only drafted examples are adopted."
        self.message_user(request, message)
        for line in refused:
            self.message_user(request, line, level=messages.WARNING)

    def save_model(self, request: HttpRequest, obj: Model, form: Any, change: bool) -> None:
        assert isinstance(obj, RoutingExample)  # no add form: only existing examples are saved here
        routing_example_edit(example=obj, text=form.cleaned_data["text"])
