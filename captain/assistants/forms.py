"""Admin forms of assistants, scenarios and model endpoints: they write through the services."""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.core.exceptions import ValidationError

from captain.actions.services.tools import SCENARIO_TOOL_NAMES
from captain.assistants.models import Assistant, ModelEndpoint, Scenario
from captain.assistants.services.assistants import ASSISTANT_FIELDS, assistant_errors
from captain.assistants.services.builder import scenario_key_from_title
from captain.assistants.services.destinations import secret_stays, url_origin
from captain.assistants.services.model_endpoints import model_endpoint_check
from captain.assistants.services.scenarios import SCENARIO_FIELDS, scenario_errors, scenario_key_errors
from captain.crypto import secret_encrypt
from captain.form_fields import (
    TEMPLATE_HELP,
    LinesField,
    add_field_errors,
    limit_teams_to_account,
    team_account_error,
)


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

    def clean(self) -> dict[str, Any]:
        super().clean()  # a ModelForm's clean() returns its cleaned_data, typed as Optional for overrides
        cleaned = self.cleaned_data
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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
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
        from captain.actions.services.custom_tools import custom_tool_names

        custom = custom_tool_names(account_id=account_id) if account_id else []
        # The field declared above: a MultipleChoiceField (self.fields only holds copies of the declared fields).
        tools = cast(forms.MultipleChoiceField, self.fields["tools"])
        tools.choices = [(name, name) for name in [*SCENARIO_TOOL_NAMES, *custom]]

    def clean_tools(self) -> list[str]:
        return list(dict.fromkeys(self.cleaned_data.get("tools") or []))

    def clean(self) -> dict[str, Any]:
        super().clean()  # a ModelForm's clean() returns its cleaned_data, typed as Optional for overrides
        cleaned = self.cleaned_data
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

    def clean(self) -> dict[str, Any]:
        super().clean()  # a ModelForm's clean() returns its cleaned_data, typed as Optional for overrides
        cleaned = self.cleaned_data
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
            # The key was given for another server (captain.assistants.services.destinations).
            endpoint.api_key_encrypted = ""
            self.api_key_dropped = True
        if commit:
            endpoint.save()
        return endpoint
