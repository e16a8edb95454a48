"""Admin forms of the routing graph: they write through the routing service."""

from __future__ import annotations

from typing import Any

from django import forms

from captain.form_fields import (
    LinesField,
    limit_teams_to_account,
    team_account_error,
)
from captain.routing.models import RoutingNode
from captain.routing.services.routing import router_choice_errors


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
        from captain.routing.services.routing import routing_reference_errors

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
