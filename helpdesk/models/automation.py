"""Macros (named lists of actions a person runs on conversations) and automation rules (an event, conditions and
actions that run by themselves), with the record of every rule run.

Actions and conditions are JSON on the row, checked on every save (`actions_parse`, `conditions_parse`): a row
with an unknown kind or a value of the wrong shape is never stored, so the code that runs them can trust them.
The services that run them are helpdesk.services.macros and helpdesk.services.automation*.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _

from .account import Account
from .conversation import Conversation

MAX_ACTIONS = 20
MAX_TEXT = 5000
MAX_SNOOZE_MINUTES = 60 * 24 * 90

# What each action kind's `value` is: a label name, a user id (None: nobody), a team id (None: no team), a
# priority, minutes to snooze, nothing, a canned response's short code, a note's text; rules only: an e-mail's
# text for the conversation's team, a webhook URL.
MACRO_ACTION_KINDS = (
    "add_label",
    "remove_label",
    "assign_agent",
    "assign_team",
    "set_priority",
    "snooze",
    "resolve",
    "send_canned",
    "add_note",
)
RULE_ACTION_KINDS = (*MACRO_ACTION_KINDS, "email_team", "call_webhook")


@dataclass(frozen=True)
class Action:
    """One step of a macro or rule, checked (`actions_parse`)."""

    kind: str
    """One of RULE_ACTION_KINDS (macros: MACRO_ACTION_KINDS)."""
    value: str | int | None = None
    """What the kind needs (see above); None where it needs nothing or means "nobody"/"no team"."""

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "value": self.value}


def _text(kind: str, value: Any, *, required: bool = True, limit: int = MAX_TEXT) -> str:
    if not isinstance(value, str) or (required and not value.strip()) or len(value) > limit:
        raise ValidationError(f"{kind}: a text of at most {limit} characters is needed.")
    return value.strip()


def _id_or_none(kind: str, value: Any) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int | str) or not str(value).isdigit():
        raise ValidationError(f"{kind}: an id (a whole number) or nothing is needed.")
    return int(value)


def _value(kind: str, value: Any) -> str | int | None:
    if kind in ("add_label", "remove_label"):
        label = _text(kind, value, limit=64).lower()
        if not all(c.isalnum() or c in "-_" for c in label):
            raise ValidationError(f"{kind}: a label is one word: letters, digits, - and _.")
        return label
    if kind in ("assign_agent", "assign_team"):
        return _id_or_none(kind, value)
    if kind == "set_priority":
        if value not in Conversation.Priority.values:
            raise ValidationError(f"set_priority: one of {', '.join(Conversation.Priority.values)}.")
        return str(value)
    if kind == "snooze":
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SNOOZE_MINUTES:
            raise ValidationError(f"snooze: minutes from 1 to {MAX_SNOOZE_MINUTES}.")
        return value
    if kind == "resolve":
        return None
    if kind == "send_canned":
        return _text(kind, value, limit=64)
    if kind == "call_webhook":
        url = _text(kind, value, limit=500)
        if not url.startswith(("https://", "http://")):
            raise ValidationError("call_webhook: an http(s) URL is needed.")
        return url
    return _text(kind, value)  # add_note, email_team


def actions_parse(raw: Any, *, kinds: tuple[str, ...] = RULE_ACTION_KINDS) -> list[Action]:
    """The checked actions of `raw` (a JSON list of {"kind", "value"}); ValidationError names the first wrong one."""
    if not isinstance(raw, list) or not raw:
        raise ValidationError("Actions are a list of at least one {kind, value}.")
    if len(raw) > MAX_ACTIONS:
        raise ValidationError(f"At most {MAX_ACTIONS} actions.")
    actions = []
    for item in raw:
        if not isinstance(item, dict) or set(item) - {"kind", "value"}:
            raise ValidationError("Each action is {kind, value}.")
        kind = item.get("kind")
        if kind not in kinds:
            raise ValidationError(f"Unknown action {kind!r}: one of {', '.join(kinds)}.")
        actions.append(Action(kind=kind, value=_value(kind, item.get("value"))))
    return actions


class Visibility(models.TextChoices):
    PERSONAL = "personal", _("Only me")
    ACCOUNT = "account", _("Everyone in the account")


class Macro(models.Model):
    """A named list of actions a person runs with one click on one or many conversations."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="macros")
    name = models.CharField(max_length=100)
    visibility = models.CharField(max_length=16, choices=Visibility.choices, default=Visibility.ACCOUNT)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text=_("Who made it; a personal macro is seen by its owner only."),
    )
    actions = models.JSONField(
        default=list,
        help_text=_('In order, e.g. [{"kind": "add_label", "value": "billing"}, {"kind": "resolve"}].'),
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "pk"]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.clean()  # never stored unchecked, whoever saves it
        super().save(*args, **kwargs)

    def clean(self) -> None:
        try:
            self.actions = [a.as_json() for a in actions_parse(self.actions, kinds=MACRO_ACTION_KINDS)]
        except ValidationError as exc:
            raise ValidationError({"actions": exc.messages}) from exc
        if self.visibility == Visibility.PERSONAL and self.owner_id is None:
            raise ValidationError({"owner": _("A personal macro needs its owner.")})


class AutomationEvent(models.TextChoices):
    CONVERSATION_CREATED = "conversation_created", _("Conversation created")
    MESSAGE_CREATED = "message_created", _("Message created")
    CONVERSATION_UPDATED = "conversation_updated", _("Conversation updated")
    SLA_BREACHED = "sla_breached", _("SLA breached")


# Condition keys and what each holds; all given conditions must hold (an empty dict: every conversation).
CONDITION_KEYS = {
    "inbox_ids": "a list of inbox ids (any of them)",
    "channel_types": "a list of channel types (any of them)",
    "labels": "a list of labels (all of them on the conversation)",
    "text_contains": "a text the message contains (case-insensitive; the last customer message when no message)",
    "contact_attribute": 'one {"key": ..., "value": ...} the contact\'s custom attribute equals',
    "ai_outcome": '"handoff" (handed to people) or "reply" (the AI answered, not handed over)',
    "business_hours": '"inside" or "outside" the inbox\'s business hours (an inbox without hours is always inside)',
}


def conditions_parse(raw: Any) -> dict[str, Any]:
    """The checked conditions of `raw` (a JSON object with CONDITION_KEYS); ValidationError says what is wrong."""
    if not isinstance(raw, dict):
        raise ValidationError("Conditions are an object.")
    unknown = set(raw) - set(CONDITION_KEYS)
    if unknown:
        raise ValidationError(f"Unknown conditions: {', '.join(sorted(unknown))}.")
    out: dict[str, Any] = {}
    for key in ("inbox_ids",):
        if key in raw:
            if not isinstance(raw[key], list) or not all(type(v) is int for v in raw[key]):
                raise ValidationError(f"{key}: {CONDITION_KEYS[key]}.")
            out[key] = raw[key]
    for key in ("channel_types", "labels"):
        if key in raw:
            if not isinstance(raw[key], list) or not all(isinstance(v, str) and v for v in raw[key]):
                raise ValidationError(f"{key}: {CONDITION_KEYS[key]}.")
            out[key] = [v.lower() if key == "labels" else v for v in raw[key]]
    if "text_contains" in raw:
        out["text_contains"] = _text("text_contains", raw["text_contains"], limit=500)
    if "contact_attribute" in raw:
        attr = raw["contact_attribute"]
        if not isinstance(attr, dict) or set(attr) != {"key", "value"} or not isinstance(attr["key"], str):
            raise ValidationError(f"contact_attribute: {CONDITION_KEYS['contact_attribute']}.")
        out["contact_attribute"] = attr
    if "ai_outcome" in raw:
        if raw["ai_outcome"] not in ("handoff", "reply"):
            raise ValidationError(f"ai_outcome: {CONDITION_KEYS['ai_outcome']}.")
        out["ai_outcome"] = raw["ai_outcome"]
    if "business_hours" in raw:
        if raw["business_hours"] not in ("inside", "outside"):
            raise ValidationError(f"business_hours: {CONDITION_KEYS['business_hours']}.")
        out["business_hours"] = raw["business_hours"]
    return out


class AutomationRule(models.Model):
    """When `event` happens to a conversation and every condition holds, the actions run (by "Automation")."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="automation_rules")
    name = models.CharField(max_length=100)
    active = models.BooleanField(default=True)
    event = models.CharField(max_length=32, choices=AutomationEvent.choices)
    conditions = models.JSONField(
        default=dict,
        blank=True,
        help_text=_('All must hold, e.g. {"text_contains": "refund", "inbox_ids": [1]}.'),
    )
    actions = models.JSONField(
        default=list, help_text=_('In order, e.g. [{"kind": "add_label", "value": "refund"}].')
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["account", "name"], name="automation_rule_unique_name")
        ]
        indexes = [models.Index(fields=["account", "event", "active"], name="automation_rule_event")]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.clean()
        super().save(*args, **kwargs)

    def clean(self) -> None:
        errors: dict[str, list[str]] = {}
        try:
            self.conditions = conditions_parse(self.conditions)
        except ValidationError as exc:
            errors["conditions"] = exc.messages
        try:
            self.actions = [a.as_json() for a in actions_parse(self.actions)]
        except ValidationError as exc:
            errors["actions"] = exc.messages
        if errors:
            raise ValidationError(errors)


class AutomationRun(models.Model):
    """One run of a rule on a conversation: what it did, and what went wrong (the other actions still ran)."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    rule = models.ForeignKey(AutomationRule, null=True, on_delete=models.SET_NULL, related_name="runs")
    rule_name = models.CharField(max_length=100)
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="automation_runs")
    event = models.CharField(max_length=32, choices=AutomationEvent.choices)
    actions_done = models.JSONField(default=list)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["conversation", "created_at"], name="automation_run_recent")]

    def __str__(self) -> str:
        return f"{self.rule_name} on #{self.conversation_id}"
