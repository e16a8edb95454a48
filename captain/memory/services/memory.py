"""Memory variables: what the AI remembers about a customer or a conversation.

Builders declare variables per assistant (`MemoryVariable`); values are stored per contact or per conversation
(`MemoryValue`) and written by the model (the `remember` tool), by agents (the conversation page) and by other
systems (the API), each only where the declaration allows it. Every write goes through `memory_write`, so the
three writers get the same validation and the same messages.

A value reaches the prompt with Coze Studio's precedence: a value given with the request (the playground, a
test run) over the stored value over the builder's default.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from django.db import transaction
from django.db.models import Q

from captain.assistants.models import Assistant
from captain.memory.models import MemoryValue, MemoryVariable
from helpdesk.models import Conversation

MAX_TEXT_CHARS = 500
Source = Literal["request", "stored", "default", "unset"]
_TRUE = {"true", "yes", "1", "on", "是", "对"}
_FALSE = {"false", "no", "0", "off", "否", "不"}


class MemoryWriteRefused(ValueError):
    """A write that cannot be taken; `str(exc)` is a clear message for whoever wrote (model, agent, API)."""


@dataclass(frozen=True)
class MemoryEntry:
    """One declared variable and the value a turn sees, with where that value came from."""

    name: str
    description: str
    kind: str
    scope: str
    value: object
    source: Source
    writable_by_ai: bool
    writable_by_agents: bool
    writable_by_api: bool
    choices: tuple[str, ...] = ()
    written_by: str = ""
    updated_at: datetime | None = None

    @property
    def is_set(self) -> bool:
        return self.source != "unset"


def _owner(variable: MemoryVariable, conversation: Conversation) -> dict[str, Any]:
    if variable.scope == MemoryVariable.Scope.CONTACT:
        return {"contact_id": conversation.contact_id}
    return {"conversation_id": conversation.pk}


def coerce_value(variable: MemoryVariable, value: object) -> object:
    """`value` as the variable's kind, or MemoryWriteRefused saying what was expected.

    Lenient where a model or a form naturally differs from JSON ("42" for a number, "yes" for a flag), strict about
    meaning: a choice must be one of the declared ones, a number must be finite.
    """
    kind = variable.kind
    if value is None:
        raise MemoryWriteRefused(f"'{variable.name}' needs a value (use forget/clear to remove it).")
    if kind == MemoryVariable.Kind.NUMBER:
        if isinstance(value, bool):
            raise MemoryWriteRefused(f"'{variable.name}' is a number, not yes/no.")
        try:
            number = float(value) if isinstance(value, str) else value
        except ValueError:
            raise MemoryWriteRefused(
                f"'{variable.name}' must be a number, got {str(value)[:40]!r}."
            ) from None
        if not isinstance(number, int | float) or not math.isfinite(number):
            raise MemoryWriteRefused(f"'{variable.name}' must be a finite number.")
        return int(number) if float(number).is_integer() else float(number)
    if kind == MemoryVariable.Kind.BOOLEAN:
        if isinstance(value, bool):
            return value
        word = str(value).strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
        raise MemoryWriteRefused(f"'{variable.name}' must be yes or no, got {str(value)[:40]!r}.")
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise MemoryWriteRefused(f"'{variable.name}' must be text.")
    text = " ".join(str(value).split())  # one line: a value never opens a new prompt section
    if not text:
        raise MemoryWriteRefused(f"'{variable.name}' cannot be empty (use forget/clear to remove it).")
    if len(text) > MAX_TEXT_CHARS:
        raise MemoryWriteRefused(f"'{variable.name}' is at most {MAX_TEXT_CHARS} characters.")
    if kind == MemoryVariable.Kind.CHOICE:
        choices = [str(c) for c in variable.choices]
        match = next((c for c in choices if c.lower() == text.lower()), None)
        if match is None:
            raise MemoryWriteRefused(f"'{variable.name}' must be one of: {', '.join(choices)}.")
        return match
    return text


def _allowed(variable: MemoryVariable, writer: str) -> bool:
    allowed: dict[str, bool] = {
        MemoryValue.Writer.AI: variable.writable_by_ai,
        MemoryValue.Writer.AGENT: variable.writable_by_agents,
        MemoryValue.Writer.API: variable.writable_by_api,
    }
    return allowed.get(writer, False)


def _declared(assistant: Assistant, name: str, writer: str) -> MemoryVariable:
    variable = MemoryVariable.objects.filter(assistant=assistant, name=str(name).strip()).first()
    if variable is None:
        declared = ", ".join(assistant.memory_variables.values_list("name", flat=True)) or "none"
        raise MemoryWriteRefused(
            f"'{str(name)[:64]}' is not a declared memory variable (declared: {declared})."
        )
    if not _allowed(variable, writer):
        raise MemoryWriteRefused(
            f"'{variable.name}' may not be written by {MemoryValue.Writer(writer).label}."
        )
    return variable


def _check_tenant(assistant: Assistant, conversation: Conversation) -> None:
    # Callers resolve both within one account; this makes a mix-up a loud bug, never a cross-tenant write.
    if assistant.account_id != conversation.account_id:
        raise MemoryWriteRefused("The conversation belongs to another account.")


def memory_write(
    *, assistant: Assistant, conversation: Conversation, name: str, value: object, writer: str
) -> MemoryValue:
    """Store `value` for the declared variable `name` (on the contact or the conversation, by its scope)."""
    _check_tenant(assistant, conversation)
    variable = _declared(assistant, name, writer)
    coerced = coerce_value(variable, value)
    with transaction.atomic():
        row, _ = MemoryValue.objects.update_or_create(
            variable=variable,
            **_owner(variable, conversation),
            defaults={"account_id": conversation.account_id, "value": coerced, "written_by": writer},
        )
    return row


def memory_clear(*, assistant: Assistant, conversation: Conversation, name: str, writer: str) -> None:
    """Remove the stored value of `name`; its default (if any) applies again."""
    _check_tenant(assistant, conversation)
    variable = _declared(assistant, name, writer)
    MemoryValue.objects.filter(variable=variable, **_owner(variable, conversation)).delete()


def _default(variable: MemoryVariable) -> object | None:
    if not variable.default.strip():
        return None
    try:
        return coerce_value(variable, variable.default)
    except MemoryWriteRefused:
        return variable.default  # a default saved before its kind changed still reads as the builder wrote it


def _resolve(
    variable: MemoryVariable, requested: Mapping[str, object], row: MemoryValue | None
) -> tuple[object | None, Source]:
    if variable.name in requested:
        with contextlib.suppress(MemoryWriteRefused):
            return coerce_value(variable, requested[variable.name]), "request"
    if row is not None:
        return row.value, "stored"
    default = _default(variable)
    if default is not None:
        return default, "default"
    return None, "unset"


def memory_state(
    *,
    assistant: Assistant,
    conversation: Conversation | None,
    request_values: Mapping[str, object] | None = None,
) -> list[MemoryEntry]:
    """Every declared variable with the value this turn sees: request value > stored value > default.

    A request value that does not fit its declaration is ignored (the stored value stands); undeclared names in
    `request_values` are ignored too: only declared variables ever reach a prompt.
    """
    variables = list(assistant.memory_variables.all())
    stored: dict[int, MemoryValue] = {}
    if conversation is not None and variables:
        scopes = {v.pk: v.scope for v in variables}
        rows = MemoryValue.objects.filter(variable__in=variables, account_id=conversation.account_id).filter(
            Q(contact_id=conversation.contact_id) | Q(conversation_id=conversation.pk)
        )
        for found in rows:
            # A variable whose scope changed keeps its old rows; only the ones of its current scope count.
            if (found.contact_id is not None) == (scopes[found.variable_id] == MemoryVariable.Scope.CONTACT):
                stored[found.variable_id] = found
    requested = request_values or {}
    entries = []
    for variable in variables:
        value, source = _resolve(variable, requested, stored.get(variable.pk))
        row = stored.get(variable.pk)
        entries.append(
            MemoryEntry(
                name=variable.name,
                description=variable.description,
                kind=variable.kind,
                scope=variable.scope,
                value=value,
                source=source,
                writable_by_ai=variable.writable_by_ai,
                writable_by_agents=variable.writable_by_agents,
                writable_by_api=variable.writable_by_api,
                choices=tuple(str(c) for c in variable.choices),
                written_by=row.written_by if row is not None and source == "stored" else "",
                updated_at=row.updated_at if row is not None else None,
            )
        )
    return entries
