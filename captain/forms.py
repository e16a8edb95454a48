"""The admin forms of captain. They show what a builder may write; the rules themselves (template sandbox,
tool allowlist, scenario keys, endpoint/model choices) belong to the write services in `captain.services`, which
these forms call in `clean()` to show the same messages the API answers with.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from captain.crypto import secret_encrypt
from captain.form_fields import (
    TEMPLATE_HELP,
    LinesField,
    add_field_errors,
    limit_teams_to_account,
    team_account_error,
)
from captain.models import Assistant, FaqEntry, ModelEndpoint, RoutingNode, Scenario
from captain.services.assistants import ASSISTANT_FIELDS, assistant_errors
from captain.services.builder import scenario_key_from_title
from captain.services.destinations import secret_stays, url_origin
from captain.services.faq import FAQ_ENTRY_FIELDS
from captain.services.model_endpoints import model_endpoint_check
from captain.services.routing import router_choice_errors
from captain.services.scenarios import SCENARIO_FIELDS, scenario_errors, scenario_key_errors
from captain.tools import SCENARIO_TOOL_NAMES


class AssistantAdminForm(forms.ModelForm):
    response_guidelines = LinesField(
        label="Response guidelines",
        help_text="One rule per line, e.g. “Answer in the customer's language.”",
    )
    guardrails = LinesField(
        label="Guardrails", help_text="One thing the AI must never do per line, e.g. “Promise refunds.”"
    )

    class Meta:
        model = Assistant
        fields = ["account", *ASSISTANT_FIELDS]
        help_texts = {"instructions": f"Extra instructions for the triage assistant. {TEMPLATE_HELP}"}

    def clean(self) -> dict:
        cleaned = super().clean()
        account = cleaned.get("account") or getattr(self.instance, "account", None)
        fields = {name: cleaned[name] for name in ASSISTANT_FIELDS if name in cleaned}
        if account is None:
            # No account to check an endpoint/model choice against (its own field error says why).
            fields.pop("model_endpoint", None)
            fields.pop("model", None)
        add_field_errors(
            self,
            assistant_errors(
                account_id=account.pk if account is not None else 0,
                fields=fields,
                assistant=self.instance if self.instance.pk else None,
            ),
        )
        return cleaned


class ScenarioAdminForm(forms.ModelForm):
    """Key: optional on creation (derived from the title), read-only afterwards."""

    tools = forms.MultipleChoiceField(
        choices=[(name, name) for name in SCENARIO_TOOL_NAMES],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Tools this scenario may call (handing off to people is always allowed).",
    )

    class Meta:
        model = Scenario
        fields = [*SCENARIO_FIELDS, "handoff_team"]
        help_texts = {"instruction": f"How this specialist handles the conversation. {TEMPLATE_HELP}"}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.key_derived = False
        if self.instance.assistant_id:
            limit_teams_to_account(self.fields.get("handoff_team"), self.instance.assistant.account_id)
        key = self.fields["key"]
        if self.instance.pk:
            key.disabled = True
            key.help_text = "Fixed at creation: prompts and conversations refer to it."
        else:
            key.required = False
            key.help_text = "Leave blank to derive it from the title. It cannot be changed later."
        for name in ("mode", "max_tool_calls"):  # left out of a submission: the stored value (or the default)
            if name in self.fields:
                self.fields[name].required = False

    def offer_tools_of(self, account_id: int | None) -> None:
        """The tool choices: the built-in tools and this account's custom tools (never another account's)."""
        from captain.services.custom_tools import custom_tool_names

        custom = custom_tool_names(account_id=account_id) if account_id else []
        self.fields["tools"].choices = [(name, name) for name in [*SCENARIO_TOOL_NAMES, *custom]]

    def clean_tools(self) -> list[str]:
        return list(dict.fromkeys(self.cleaned_data.get("tools") or []))

    def clean(self) -> dict:
        cleaned = super().clean()
        checked = ("instruction", "tools", "mode", "max_tool_calls", "model_endpoint", "model", "temperature")
        for name in ("mode", "max_tool_calls"):
            if name in cleaned and cleaned[name] in ("", None):
                cleaned[name] = getattr(self.instance, name)
        assistant = cleaned.get("assistant") or (
            self.instance.assistant if self.instance.assistant_id else None
        )
        add_field_errors(
            self,
            scenario_errors(fields={k: cleaned[k] for k in checked if k in cleaned}, assistant=assistant),
        )
        problem = team_account_error(cleaned.get("handoff_team"), assistant.account_id if assistant else None)
        if problem:
            self.add_error("handoff_team", problem)
        if not self.instance.pk and not cleaned.get("key") and cleaned.get("title"):
            taken = (
                Scenario.objects.filter(assistant_id=self.instance.assistant_id).values_list("key", flat=True)
                if self.instance.assistant_id
                else []
            )
            cleaned["key"] = scenario_key_from_title(cleaned["title"], taken=taken)
            self.key_derived = True
        return cleaned


class ScenarioInlineFormSet(forms.BaseInlineFormSet):
    """Derived keys are made unique among the rows added together, before the duplicate check runs."""

    def add_fields(self, form: forms.BaseForm, index: int | None) -> None:
        super().add_fields(form, index)
        if isinstance(form, ScenarioAdminForm):  # the parent assistant's account decides the custom tools
            form.offer_tools_of(self.instance.account_id if self.instance.pk else None)
            limit_teams_to_account(
                form.fields.get("handoff_team"), self.instance.account_id if self.instance.pk else None
            )

    def clean(self) -> None:
        if any(self.errors):
            return
        alive = [f for f in self.forms if f.cleaned_data and not f.cleaned_data.get("DELETE")]
        existing = set(
            Scenario.objects.filter(assistant_id=self.instance.pk).values_list("key", flat=True)
            if self.instance.pk
            else []
        )
        new_forms = [f for f in alive if not f.instance.pk]
        taken = set(existing)
        for form in new_forms:
            key = form.cleaned_data.get("key")
            if getattr(form, "key_derived", False) or not key:
                continue
            # The inline's foreign key is excluded from model validation, so the database constraint would be
            # the first to notice: the service's rule says it here instead, on the row.
            for error in scenario_key_errors(assistant=self.instance, key=key, taken=existing):
                form.add_error("key", error)
            taken.add(key)
        for position, form in enumerate(new_forms, start=len(existing) + 1):
            if getattr(form, "key_derived", False):
                key = scenario_key_from_title(form.cleaned_data["title"], taken=taken, position=position)
                form.cleaned_data["key"] = form.instance.key = key
                taken.add(key)
        super().clean()


class FaqEntryAdminForm(forms.ModelForm):
    class Meta:
        model = FaqEntry
        fields = ["assistant", *FAQ_ENTRY_FIELDS]


class RoutingInlineFormSet(forms.BaseInlineFormSet):
    """Node keys in routing rows must name this assistant's triage (`assistant`) or one of its enabled scenarios
    (targets may also be `human`); duplicates are refused. Scenarios must be saved before edges point at them."""

    key_fields: tuple[tuple[str, bool], ...] = ()
    """(field name, is a jump target)."""
    unique_fields: tuple[str, ...] = ()

    def clean(self) -> None:
        super().clean()
        if any(self.errors) or not self.instance.pk:
            return
        from captain.services.routing import routing_reference_errors

        seen: set[tuple] = set()
        for form in self.forms:
            data = getattr(form, "cleaned_data", None)
            if not data or data.get("DELETE"):
                continue
            for name, target in self.key_fields:
                for error in routing_reference_errors(
                    assistant=self.instance, where=name, key=data.get(name) or "", target=target
                ):
                    form.add_error(name, error)
            if self.unique_fields:
                ident = tuple(data.get(f) for f in self.unique_fields)
                if ident in seen:
                    form.add_error(self.unique_fields[0], f"Duplicate: {' -> '.join(map(str, ident))}.")
                seen.add(ident)


class RoutingNodeInlineFormSet(RoutingInlineFormSet):
    key_fields = (("key", False),)
    unique_fields = ("key",)


class RoutingEdgeInlineFormSet(RoutingInlineFormSet):
    key_fields = (("source", False), ("target", True))
    unique_fields = ("source", "target")

    def clean(self) -> None:
        super().clean()
        for form in self.forms:
            data = getattr(form, "cleaned_data", None)
            if (
                data
                and not data.get("DELETE")
                and data.get("source")
                and data.get("source") == data.get("target")
            ):
                form.add_error("target", "A node cannot route to itself.")


class RoutingRuleInlineFormSet(RoutingInlineFormSet):
    key_fields = (("node", False), ("target", True))

    def clean(self) -> None:
        super().clean()
        import re as _re

        for form in self.forms:
            data = getattr(form, "cleaned_data", None)
            if data and not data.get("DELETE") and data.get("match") == "regex":
                try:
                    _re.compile(data.get("value") or "")
                except _re.error as exc:
                    form.add_error("value", f"Invalid regular expression: {exc}")


class RouterChoiceForm(forms.ModelForm):
    """Routing config and node rows: the router's endpoint is a name this account may pick and its model one
    that endpoint offers (a URL is never accepted: the server decides where its keys go)."""

    def clean(self) -> dict:
        cleaned: dict[str, Any] = super().clean() or {}
        assistant = cleaned.get("assistant") or (
            self.instance.assistant if getattr(self.instance, "assistant_id", None) else None
        )
        if assistant is not None:
            for problem in router_choice_errors(
                assistant=assistant,
                where="router",
                endpoint=cleaned.get("router_endpoint", ""),
                model=cleaned.get("router_model", ""),
            ):
                self.add_error("router_endpoint", problem)
        return cleaned


class RoutingNodeAdminForm(RouterChoiceForm):
    """A routing node: its examples one per line, its handoff team one of the assistant's account's teams."""

    examples = LinesField(
        max_item_length=500,
        help_text="Messages customers send when they need this node, one per line (the router compares them).",
    )

    class Meta:
        model = RoutingNode
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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.assistant_id:
            limit_teams_to_account(self.fields.get("handoff_team"), self.instance.assistant.account_id)

    def clean(self) -> dict:
        cleaned = super().clean()
        assistant = cleaned.get("assistant") or (
            self.instance.assistant if self.instance.assistant_id else None
        )
        problem = team_account_error(cleaned.get("handoff_team"), assistant.account_id if assistant else None)
        if problem:
            self.add_error("handoff_team", problem)
        return cleaned


class ModelEndpointAdminForm(forms.ModelForm):
    """An account's own endpoint. The key is write-only: typed once, stored encrypted, never shown again."""

    new_api_key = forms.CharField(
        required=False,
        strip=True,
        widget=forms.PasswordInput(render_value=False),
        label="API key",
        help_text="Stored encrypted. Leave blank to keep the stored key.",
    )
    model_names = LinesField(
        max_item_length=200, help_text="Model names assistants may use on it, one per line. Empty: any name."
    )
    vision_models = LinesField(
        max_item_length=200,
        help_text="Which of its models can see images, one per line: customers' photos reach these as images.",
    )
    text_tool_models = LinesField(
        max_item_length=200,
        help_text="Which of its models cannot return native tool calls, one per line: their agents use the text "
        "tool protocol. `manage.py captain_probe_tools` detects it.",
    )

    class Meta:
        model = ModelEndpoint
        fields = ["account", "name", "base_url", "model_names", "vision_models", "text_tool_models"]

    def clean(self) -> dict:
        cleaned = super().clean()
        account = cleaned.get("account") or getattr(self.instance, "account", None)
        if account is not None and "name" in cleaned and "base_url" in cleaned:
            try:
                model_endpoint_check(
                    account=account,
                    name=cleaned["name"],
                    base_url=cleaned["base_url"],
                    model_names=list(cleaned.get("model_names") or []),
                    pk=self.instance.pk,
                )
            except ValidationError as exc:
                self.add_error(None, exc)
        return cleaned

    def save(self, commit: bool = True) -> ModelEndpoint:
        endpoint = super().save(commit=False)
        self.api_key_dropped = False
        if self.cleaned_data.get("new_api_key"):
            endpoint.api_key_encrypted = secret_encrypt(self.cleaned_data["new_api_key"])
        elif endpoint.api_key_encrypted and not secret_stays(
            url_origin(self.initial.get("base_url") or ""), url_origin(endpoint.base_url)
        ):
            # The key was given for another server (captain.services.destinations).
            endpoint.api_key_encrypted = ""
            self.api_key_dropped = True
        if commit:
            endpoint.save()
        return endpoint
