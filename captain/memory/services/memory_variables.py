"""Declaring memory variables: what an assistant may remember, of which kind, and who may write it.

The values themselves are written through `captain.memory.services.memory` (one set of rules for the model, agents and
the API). The API and the admin declare variables through these functions, so both refuse the same things.
"""

from __future__ import annotations

from typing import TypedDict

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from captain.assistants.models import Assistant
from captain.memory.models import MEMORY_NAME_RE, MemoryVariable
from captain.memory.services.memory import MemoryWriteRefused, coerce_value

MAX_CHOICES = 50
MAX_CHOICE_CHARS = 100


class MemoryVariableFields(TypedDict, total=False):
    name: str
    description: str
    kind: str
    choices: list[str]
    default: str
    scope: str
    writable_by_ai: bool
    writable_by_agents: bool
    writable_by_api: bool


MEMORY_VARIABLE_FIELDS = tuple(MemoryVariableFields.__annotations__)


def _choices_clean(kind: str, choices: object) -> list[str]:
    if kind != MemoryVariable.Kind.CHOICE:
        if choices:
            raise ValidationError({"choices": ["Only a choice variable has choices."]})
        return []
    if not isinstance(choices, list | tuple) or not choices:
        raise ValidationError({"choices": ["A choice variable needs its allowed values (a list of texts)."]})
    if len(choices) > MAX_CHOICES:
        raise ValidationError({"choices": [f"At most {MAX_CHOICES} choices."]})
    cleaned: list[str] = []
    for choice in choices:
        if not isinstance(choice, str) or not choice.strip():
            raise ValidationError({"choices": ["Every choice is a non-empty text."]})
        text = " ".join(choice.split())
        if len(text) > MAX_CHOICE_CHARS:
            raise ValidationError({"choices": [f"A choice is at most {MAX_CHOICE_CHARS} characters."]})
        if text.lower() in (c.lower() for c in cleaned):
            raise ValidationError({"choices": [f"'{text}' is listed twice."]})
        cleaned.append(text)
    return cleaned


def memory_variable_clean(variable: MemoryVariable) -> None:
    """Check and normalize a declaration in place, or ValidationError({field: [messages]}).

    The name is what the model writes with `remember`; the default must be a value of the kind, so what a turn
    sees while nothing is stored always fits the declaration.
    """
    variable.name = (variable.name or "").strip()
    if not MEMORY_NAME_RE.match(variable.name):
        raise ValidationError(
            {"name": ["Lowercase letters, digits and _, starting with a letter (at most 64)."]}
        )
    variable.description = " ".join((variable.description or "").split())
    if not variable.description:
        raise ValidationError({"description": ["Say what the value is: the model reads this to decide."]})
    if variable.kind not in MemoryVariable.Kind.values:
        raise ValidationError({"kind": [f"Kind is one of: {', '.join(MemoryVariable.Kind.values)}."]})
    if variable.scope not in MemoryVariable.Scope.values:
        raise ValidationError({"scope": [f"Scope is one of: {', '.join(MemoryVariable.Scope.values)}."]})
    variable.choices = _choices_clean(variable.kind, variable.choices)
    variable.default = (variable.default or "").strip()
    if variable.default:
        try:
            variable.default = str(_as_text(coerce_value(variable, variable.default)))
        except MemoryWriteRefused as exc:
            raise ValidationError({"default": [str(exc)]}) from None
    variable.full_clean(exclude=["assistant"], validate_unique=False, validate_constraints=False)


def _as_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _saved(variable: MemoryVariable) -> MemoryVariable:
    taken = ValidationError({"name": [f"'{variable.name}' is already declared on this assistant."]})
    duplicate = (
        MemoryVariable.objects.filter(assistant_id=variable.assistant_id, name=variable.name)
        .exclude(pk=variable.pk)
        .exists()
    )
    if duplicate:
        raise taken
    try:
        with transaction.atomic():
            variable.save()
    except IntegrityError:  # declared at the same moment by someone else: the constraint decides
        raise taken from None
    return variable


def memory_variable_create(*, assistant: Assistant, **fields: object) -> MemoryVariable:
    unknown = set(fields) - set(MEMORY_VARIABLE_FIELDS)
    if unknown:
        raise ValidationError({name: ["Unknown field."] for name in sorted(unknown)})
    variable = MemoryVariable(assistant=assistant, **fields)
    memory_variable_clean(variable)
    return _saved(variable)


def memory_variable_update(*, variable: MemoryVariable, **fields: object) -> MemoryVariable:
    """Change a declaration. Stored values stay: one that no longer fits its kind is shown as stored until it is
    written again; a value of a changed scope stays with its old owner and no longer counts (see memory_state)."""
    unknown = set(fields) - set(MEMORY_VARIABLE_FIELDS)
    if unknown:
        raise ValidationError({name: ["Unknown field."] for name in sorted(unknown)})
    for name, value in fields.items():
        setattr(variable, name, value)
    if "kind" in fields and fields["kind"] != MemoryVariable.Kind.CHOICE and "choices" not in fields:
        variable.choices = []  # leaving the choice kind drops its choices rather than refusing the change
    memory_variable_clean(variable)
    return _saved(variable)


def memory_variable_delete(*, variable: MemoryVariable) -> None:
    """Remove the declaration and every value stored for it."""
    variable.delete()
