"""Writes of scenarios (the specialists an assistant hands conversations to).

`ScenarioFields` is the one list of builder-editable scenario fields (the API serializers and the admin form use
`SCENARIO_FIELDS`). A scenario's `key` names its handoff tool (`handoff_to_<key>`): optional on creation (derived
from the title), unique per assistant, fixed afterwards. Rule violations raise `ValidationError({field: [...]})`.
Creating a scenario, changing its title, description or instruction, or enabling it queues drafting of its
routing examples after commit (captain.routing.services.example_drafts): here rather than in a signal, so the side
effect is visible where scenarios are written (API, admin and the demo commands all write through here).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypedDict, Unpack

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from captain.actions.services.custom_tools import custom_tool_names
from captain.actions.services.tools import SCENARIO_TOOL_NAMES
from captain.answering.services.warmup import prompt_warm_enqueue
from captain.assistants.models import Assistant, Scenario, ScenarioMode, validate_scenario_key
from captain.assistants.services.builder import (
    FieldErrors,
    memory_names,
    raise_field_errors,
    scenario_key_from_title,
    template_errors,
)
from captain.assistants.services.model_endpoints import model_choice_errors
from captain.routing.models import RoutingExample
from captain.routing.services.example_drafts import example_drafts_enqueue, scenario_texts_changed
from helpdesk.models import Team


class ScenarioFields(TypedDict, total=False):
    """What a builder writes on a scenario besides its key."""

    title: str
    description: str
    """What the customer wants when this scenario applies (the router reads it)."""
    instruction: str
    """Jinja template source, checked in the prompt sandbox at save time."""
    enabled: bool
    tools: list[str]
    """Names from `captain.actions.services.tools.SCENARIO_TOOL_NAMES` and the account's custom tools; duplicates are dropped."""
    mode: str
    """`tools` (the plain loop) or `planning` (todo list, confirmation, summary): `ScenarioMode`."""
    max_tool_calls: int
    """Planning mode: tool calls per customer message at most (1..30)."""
    model_endpoint: str
    """Empty: the assistant's endpoint."""
    model: str
    """A model the endpoint offers, used by this specialist instead of the assistant's; empty: the assistant's."""
    temperature: float | None
    """None: the assistant's."""
    handoff_team_id: int | None
    """The team (of the assistant's account) whose people pick up this scenario's escalations; None: the
    routing node's team, else nobody in particular."""


SCENARIO_FIELDS: tuple[str, ...] = (
    "title",
    "key",
    *(f for f in ScenarioFields.__annotations__ if f not in ("title", "handoff_team_id")),
)
"""Every field a builder sees as a plain value, `key` included (writable on creation only). The handoff team is
a relation: forms and serializers name it `handoff_team` themselves."""


def _only_scenario_fields(fields: Mapping[str, Any]) -> None:
    unknown = sorted(set(fields) - set(ScenarioFields.__annotations__))
    if unknown:
        raise TypeError(f"Not a scenario field: {', '.join(unknown)}")


def duplicate_key_message(key: str) -> str:
    return f"This assistant already has a scenario with key '{key}'."


MAX_TOOL_CALLS_LIMIT = 30


def scenario_tool_errors(tools: Iterable[str], *, account_id: int | None) -> list[str]:
    """[] when every name is a built-in scenario tool or one of the account's custom tools (any other
    account's tool is unknown here); else a message naming the unknown ones and the choices."""
    custom = custom_tool_names(account_id=account_id) if account_id is not None else []
    unknown = [name for name in tools if name not in SCENARIO_TOOL_NAMES and name not in custom]
    if not unknown:
        return []
    allowed = ", ".join([*SCENARIO_TOOL_NAMES, *custom])
    return [
        f"Unknown tool(s): {', '.join(map(str, unknown))}. Allowed: {allowed} "
        "(handoff_to_human is always available and is not listed)."
    ]


def scenario_errors(*, fields: Mapping[str, Any], assistant: Assistant | None = None) -> FieldErrors:
    """Why these scenario fields cannot be stored ({} when they can); only the fields given are checked.
    `assistant` (when known) lets the instruction use its memory variables and checks a model choice against the
    endpoints its account may use."""
    errors: FieldErrors = {}
    if "instruction" in fields:
        errors["instruction"] = template_errors(
            fields["instruction"] or "", memory_names=memory_names(assistant) if assistant else ()
        )
    if "tools" in fields:
        errors["tools"] = scenario_tool_errors(
            fields["tools"] or [], account_id=assistant.account_id if assistant is not None else None
        )
    if "mode" in fields and fields["mode"] not in ScenarioMode.values:
        errors["mode"] = [f"One of: {', '.join(ScenarioMode.values)}."]
    if "max_tool_calls" in fields:
        calls = fields["max_tool_calls"]
        if not isinstance(calls, int) or isinstance(calls, bool) or not 1 <= calls <= MAX_TOOL_CALLS_LIMIT:
            errors["max_tool_calls"] = [f"A whole number from 1 to {MAX_TOOL_CALLS_LIMIT}."]
    team_id = fields.get("handoff_team_id")
    if team_id is not None and (
        assistant is None or not Team.objects.filter(pk=team_id, account_id=assistant.account_id).exists()
    ):
        errors["handoff_team_id"] = ["No such team in this account."]
    temperature = fields.get("temperature")
    if temperature is not None and not 0 <= temperature <= 2:
        errors["temperature"] = ["Between 0 and 2, or empty for the assistant's."]
    choice = {k: fields.get(k) or "" for k in ("model_endpoint", "model")}
    if assistant is not None and any(choice.values()):
        errors["model"] = model_choice_errors(
            account_id=assistant.account_id,
            endpoint=choice["model_endpoint"] or assistant.model_endpoint,
            model=choice["model"],
        )
    return {name: messages for name, messages in errors.items() if messages}


def scenario_key_errors(*, assistant: Assistant, key: str, taken: set[str] | None = None) -> list[str]:
    """Why `key` cannot be the key of a new scenario of `assistant` ([] when it can)."""
    try:
        validate_scenario_key(key)
    except ValidationError as exc:
        return list(exc.messages)
    if taken is None:
        taken = set(Scenario.objects.filter(assistant=assistant).values_list("key", flat=True))
    return [duplicate_key_message(key)] if key in taken else []


def _deduplicated(fields: ScenarioFields) -> ScenarioFields:
    if "tools" in fields:
        fields["tools"] = list(dict.fromkeys(fields["tools"] or []))
    return fields


def scenario_create(
    *, assistant: Assistant, key: str | None = None, **fields: Unpack[ScenarioFields]
) -> Scenario:
    """A new scenario of `assistant`; without `key`, one derived from the title (unique for the assistant)."""
    _only_scenario_fields(fields)
    errors = scenario_errors(fields=fields, assistant=assistant)
    taken = set(Scenario.objects.filter(assistant=assistant).values_list("key", flat=True))
    if key is None:
        key = scenario_key_from_title(fields.get("title", ""), taken=taken, position=len(taken) + 1)
    else:
        errors |= {"key": scenario_key_errors(assistant=assistant, key=key, taken=taken)}
    raise_field_errors(errors)
    try:
        with transaction.atomic():
            scenario = Scenario.objects.create(assistant=assistant, key=key, **_deduplicated(fields))
            # Inside the block: a create that rolls back queues nothing.
            example_drafts_enqueue(scenario_id=scenario.pk)
            prompt_warm_enqueue(assistant_id=assistant.pk)
            return scenario
    except IntegrityError as exc:  # a concurrent create took the key between our check and our insert
        raise ValidationError({"key": [duplicate_key_message(key)]}) from exc


def scenario_update(
    *, scenario: Scenario, key: str | None = None, **fields: Unpack[ScenarioFields]
) -> Scenario:
    """Write the given fields. `key` may be passed only as the stored one: it is fixed at creation."""
    _only_scenario_fields(fields)
    errors = scenario_errors(fields=fields, assistant=scenario.assistant)
    if key is not None and key != scenario.key:
        errors["key"] = [f"The key is fixed at creation ('{scenario.key}') and cannot be changed."]
    raise_field_errors(errors)
    redraft = scenario_texts_changed(scenario, dict(fields))
    for name, value in _deduplicated(fields).items():
        setattr(scenario, name, value)
    if fields:
        scenario.save(update_fields=list(fields))
    if redraft:
        example_drafts_enqueue(scenario_id=scenario.pk)
    if fields:
        prompt_warm_enqueue(assistant_id=scenario.assistant_id)
    return scenario


@transaction.atomic
def scenario_delete(*, scenario: Scenario) -> None:
    """Delete the scenario and the example messages proposed for its node (drafted or learned: a new scenario
    that reuses the key must not inherit them); other routing rows naming its key are ignored at run time
    (services/routing.py)."""
    RoutingExample.objects.filter(assistant_id=scenario.assistant_id, key=scenario.key).delete()
    prompt_warm_enqueue(assistant_id=scenario.assistant_id)
    scenario.delete()
