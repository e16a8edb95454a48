"""Form fields and helpers every captain admin form shares."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from captain.prompts import available_variables
from helpdesk.models import Team

TEMPLATE_HELP = (
    f"Jinja template. Variables: {available_variables()}; e.g. {{{{ contact.name|default('there') }}}}."
)


class LinesField(forms.CharField):
    """A list of short texts edited as one item per line (guidelines, guardrails, model names, examples): builders
    type rules, not JSON. Blank lines are dropped. A value that is a whole JSON array of strings is read as that
    list, so a list pasted from the API (or an older form submission) keeps working."""

    def __init__(self, *, max_item_length: int = 1000, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": 4, "cols": 80}))
        super().__init__(strip=False, **kwargs)
        self.max_item_length = max_item_length

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, list | tuple):
            return "\n".join(str(item) for item in value)
        return value

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]  # a list edited in CharField's widget: CharField's is str
        if isinstance(value, list | tuple):
            items = [str(item) for item in value]
        else:
            text = str(value or "").strip()
            items = text.splitlines()
            if text.startswith("["):
                try:
                    parsed = json.loads(text)
                except ValueError:
                    parsed = None
                if isinstance(parsed, list) and all(isinstance(item, str) for item in parsed):
                    items = parsed
        cleaned = [" ".join(item.split()) for item in items]
        cleaned = [item for item in cleaned if item]
        too_long = [item for item in cleaned if len(item) > self.max_item_length]
        if too_long:
            raise ValidationError(
                f"Each line may be at most {self.max_item_length} characters; this one is longer: "
                f"{too_long[0][:60]}..."
            )
        return cleaned

    def validate(self, value: Any) -> None:
        if self.required and not value:
            raise ValidationError(self.error_messages["required"], code="required")

    def has_changed(self, initial: Any, data: Any) -> bool:
        try:
            return self.to_python(initial or []) != self.to_python(data)
        except ValidationError:
            return True


def limit_teams_to_account(field: forms.Field | None, account_id: int | None) -> None:
    """A handoff team is one of the assistant's account's teams (no account yet: none to offer)."""
    if isinstance(field, forms.ModelChoiceField):
        field.queryset = Team.objects.filter(account_id=account_id) if account_id else Team.objects.none()


def team_account_error(team: Team | None, account_id: int | None) -> str | None:
    if team is not None and account_id is not None and team.account_id != account_id:
        return "Choose one of this assistant's account's teams."
    return None


def add_field_errors(form: forms.BaseForm, errors: Mapping[str, list[str]]) -> None:
    """Show a service's field errors on the form (on the field when the form has it)."""
    for name, messages in errors.items():
        for message in messages:
            form.add_error(name if name in form.fields else None, message)
