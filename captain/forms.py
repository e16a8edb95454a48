"""Validation of builder input (templates, tool allowlists, scenario keys), shared by the admin and the API,
and the admin forms that use it.

Builder-written instructions are Jinja template source. At save time they are checked statically (every branch
may use only the declared variables, `captain.prompts.variables`) and rendered with sample variables in the same
sandbox the runtime uses, so a template that would fail (or that tries to escape the sandbox, or to burn CPU with
`9**99999999`) is refused when it is written, not when a customer is waiting.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from django import forms
from django.core.exceptions import ValidationError

from .crypto import secret_encrypt
from .models import (
    MAX_SCENARIO_KEY_LENGTH,
    TRIAGE_KEY,
    Assistant,
    FaqEntry,
    ModelEndpoint,
    Scenario,
    validate_scenario_key,
)
from .prompts import PromptTemplateError, available_variables, validate_builder_text
from .services.model_endpoints import model_choice_errors, model_endpoint_check
from .services.routing import router_choice_errors
from .tools import SCENARIO_TOOL_NAMES

MAX_INSTRUCTION_CHARS = 20_000
TEMPLATE_HELP = (
    f"Jinja template. Variables: {available_variables()}; e.g. {{{{ contact.name|default('there') }}}}."
)


def validate_builder_template(text: str) -> None:
    """Raise ValidationError unless `text` passes the static template check and renders with sample variables."""
    if len(text) > MAX_INSTRUCTION_CHARS:
        raise ValidationError(f"At most {MAX_INSTRUCTION_CHARS} characters.")
    try:
        validate_builder_text(text)
    except PromptTemplateError as exc:
        raise ValidationError(f"Template error: {exc}") from exc
    except Exception as exc:
        # validate_builder_text converts the usual failures; anything else (e.g. `{{ 1/0 }}`) is still the
        # builder's template being wrong, never a server error.
        raise ValidationError(f"Template error: {type(exc).__name__}: {exc}") from exc


def validate_scenario_tools(tools: Iterable[str]) -> None:
    unknown = [name for name in tools if name not in SCENARIO_TOOL_NAMES]
    if unknown:
        raise ValidationError(
            f"Unknown tool(s): {', '.join(map(str, unknown))}. Allowed: {', '.join(SCENARIO_TOOL_NAMES)} "
            "(handoff_to_human is always available and is not listed)."
        )


def scenario_key_from_title(title: str, *, taken: Iterable[str], position: int = 1) -> str:
    """A stable key for a new scenario: `Refunds & returns` -> `refunds_returns`, then `_2`, `_3`...

    Titles without ASCII letters or digits get `scenario_<position>`. The key is derived once, at creation.
    """
    taken = set(taken) | {TRIAGE_KEY}
    base = re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_")[:MAX_SCENARIO_KEY_LENGTH].strip("_")
    if not base:
        base, n = "scenario", max(position, 1)
        while f"{base}_{n}" in taken:
            n += 1
        return f"{base}_{n}"
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        suffix = f"_{n}"
        candidate = base[: MAX_SCENARIO_KEY_LENGTH - len(suffix)].rstrip("_") + suffix
    validate_scenario_key(candidate)
    return candidate


# ---- admin forms -------------------------------------------------------------------------------------------


class AssistantAdminForm(forms.ModelForm):
    class Meta:
        model = Assistant
        fields = [
            "account",
            "name",
            "description",
            "product_name",
            "instructions",
            "response_guidelines",
            "guardrails",
            "handoff_message",
            "resolution_message",
            "model_endpoint",
            "model",
            "temperature",
            "max_turns",
        ]
        help_texts = {"instructions": f"Extra instructions for the triage assistant. {TEMPLATE_HELP}"}

    def clean(self) -> dict:
        cleaned = super().clean()
        account = cleaned.get("account") or getattr(self.instance, "account", None)
        if account is not None:
            for problem in model_choice_errors(
                account_id=account.pk,
                endpoint=cleaned.get("model_endpoint", ""),
                model=cleaned.get("model", ""),
            ):
                self.add_error("model", problem)
        return cleaned

    def clean_instructions(self) -> str:
        text = self.cleaned_data.get("instructions", "")
        validate_builder_template(text)
        return text


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
        fields = ["title", "key", "description", "instruction", "tools", "enabled"]
        help_texts = {"instruction": f"How this specialist handles the conversation. {TEMPLATE_HELP}"}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.key_derived = False
        key = self.fields["key"]
        if self.instance.pk:
            key.disabled = True
            key.help_text = "Fixed at creation: prompts and conversations refer to it."
        else:
            key.required = False
            key.help_text = "Leave blank to derive it from the title. It cannot be changed later."

    def clean_instruction(self) -> str:
        text = self.cleaned_data.get("instruction", "")
        validate_builder_template(text)
        return text

    def clean_tools(self) -> list[str]:
        tools = list(dict.fromkeys(self.cleaned_data.get("tools") or []))
        validate_scenario_tools(tools)
        return tools

    def clean(self) -> dict:
        cleaned = super().clean()
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
            if key in existing:
                # The inline's foreign key is excluded from model validation, so the database constraint
                # would be the first to notice: say it here instead.
                form.add_error("key", f"This assistant already has a scenario with key '{key}'.")
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
        fields = ["assistant", "question", "answer", "enabled"]


# ---- routing graph inlines (docs/routing.md) ------------------------------------------------------------------


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
        from .services.routing import routing_reference_errors

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
        cleaned = super().clean()
        assistant = getattr(self.instance, "assistant", None)
        if assistant is not None:
            for problem in router_choice_errors(
                assistant=assistant,
                where="router",
                endpoint=cleaned.get("router_endpoint", ""),
                model=cleaned.get("router_model", ""),
            ):
                self.add_error("router_endpoint", problem)
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

    class Meta:
        model = ModelEndpoint
        fields = ["account", "name", "base_url", "model_names"]

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
        if self.cleaned_data.get("new_api_key"):
            endpoint.api_key_encrypted = secret_encrypt(self.cleaned_data["new_api_key"])
        if commit:
            endpoint.save()
        return endpoint
