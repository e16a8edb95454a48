"""Custom attributes: the account's typed definitions, and the values stored on contacts and conversations.

A value is accepted only for a key the account defined for that kind of owner, and only of the definition's
kind (text, number, yes/no, ISO date, one of a list). A batch of changes is all-or-nothing: one bad value and
nothing is stored, and the error names every bad key with the kind it expects. `None` removes a key.

The REST API, the dashboard and the admin all write through these functions, so they accept and refuse the
same values with the same messages.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable, Mapping
from typing import TypedDict

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from helpdesk.models import Contact, Conversation, CustomAttributeDefinition
from helpdesk.models.attributes import ATTRIBUTE_KEY_RE

MAX_TEXT_CHARS = 500
MAX_CHOICES = 100
MAX_CHOICE_CHARS = 200
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}

Kind = CustomAttributeDefinition.Kind
AttributeOwner = Contact | Conversation


class DefinitionFields(TypedDict, total=False):
    """What a definition's writer may set after creation (its account, owner kind and key stay fixed: values
    are stored under the key)."""

    label: str
    description: str
    kind: str
    choices: list[str]


# ---- definitions -------------------------------------------------------------------------------------------


def attribute_choices_clean(*, kind: str, choices: object) -> list[str]:
    """The choices a definition of `kind` keeps, or ValidationError({"choices": ...})."""
    if kind != Kind.LIST:
        if choices:
            raise ValidationError({"choices": ["Only a list attribute has choices."]})
        return []
    if not isinstance(choices, list | tuple) or not choices:
        raise ValidationError({"choices": ["A list attribute needs its allowed values (a list of texts)."]})
    if len(choices) > MAX_CHOICES:
        raise ValidationError({"choices": [f"At most {MAX_CHOICES} choices."]})
    cleaned: list[str] = []
    seen: set[str] = set()
    for choice in choices:
        if not isinstance(choice, str) or not choice.strip():
            raise ValidationError({"choices": ["Every choice is a non-empty text."]})
        text = " ".join(choice.split())
        if len(text) > MAX_CHOICE_CHARS:
            raise ValidationError({"choices": [f"A choice is at most {MAX_CHOICE_CHARS} characters."]})
        if text.lower() in seen:
            raise ValidationError({"choices": [f"'{text}' is listed twice."]})
        seen.add(text.lower())
        cleaned.append(text)
    return cleaned


def attribute_definition_clean(definition: CustomAttributeDefinition) -> None:
    """Check and normalize a definition in place (label on one line, choices cleaned), or
    ValidationError({field: [messages]}). Uniqueness of the key is checked when it is saved."""
    if definition.kind not in Kind.values:
        raise ValidationError({"kind": [f"Kind is one of: {', '.join(Kind.values)}."]})
    if definition.applies_to not in CustomAttributeDefinition.AppliesTo.values:
        raise ValidationError({"applies_to": ["Applies to 'contact' or 'conversation'."]})
    if not re.match(ATTRIBUTE_KEY_RE, definition.key or ""):
        raise ValidationError(
            {"key": ["Lowercase letters, digits and _, starting with a letter (at most 64)."]}
        )
    definition.label = " ".join((definition.label or "").split())
    if not definition.label:
        raise ValidationError({"label": ["A label is required."]})
    definition.choices = attribute_choices_clean(kind=definition.kind, choices=definition.choices)
    definition.full_clean(validate_unique=False, validate_constraints=False)


def _saved(definition: CustomAttributeDefinition) -> CustomAttributeDefinition:
    duplicate = (
        CustomAttributeDefinition.objects.filter(
            account_id=definition.account_id, applies_to=definition.applies_to, key=definition.key
        )
        .exclude(pk=definition.pk)
        .exists()
    )
    taken = ValidationError({"key": [f"'{definition.key}' is already defined for {definition.applies_to}s."]})
    if duplicate:
        raise taken
    try:
        with transaction.atomic():
            definition.save()
    except IntegrityError:  # created at the same moment by someone else: the constraint decides
        raise taken from None
    return definition


def attribute_definition_create(
    *,
    account_id: int,
    applies_to: str,
    key: str,
    label: str,
    kind: str = Kind.TEXT,
    description: str = "",
    choices: Iterable[str] = (),
) -> CustomAttributeDefinition:
    """A new definition; ValidationError({field: [messages]}) for a bad field or a key already defined."""
    definition = CustomAttributeDefinition(
        account_id=account_id,
        applies_to=applies_to,
        key=key,
        label=label,
        kind=kind,
        description=description,
        choices=list(choices),
    )
    attribute_definition_clean(definition)
    return _saved(definition)


def attribute_definition_update(
    *, definition: CustomAttributeDefinition, **fields: object
) -> CustomAttributeDefinition:
    """Change label, description, kind or choices. Stored values are kept as they are: a value that no longer
    fits is shown as stored and refused only when someone writes that key again."""
    unknown = set(fields) - set(DefinitionFields.__annotations__)
    if unknown:
        raise ValidationError({name: ["This field cannot be changed."] for name in sorted(unknown)})
    for name, value in fields.items():
        setattr(definition, name, value)
    if "kind" in fields and fields["kind"] != Kind.LIST and "choices" not in fields:
        definition.choices = []  # leaving the list kind drops its choices rather than refusing the change
    attribute_definition_clean(definition)
    return _saved(definition)


def attribute_definition_delete(*, definition: CustomAttributeDefinition) -> None:
    """Remove the definition. Values stored under its key stay on the rows (defining the key again brings them
    back); a write of `None` removes such a value."""
    definition.delete()


# ---- values ------------------------------------------------------------------------------------------------


def _expected(definition: CustomAttributeDefinition) -> str:
    if definition.kind == Kind.LIST:
        return f"one of: {', '.join(str(c) for c in definition.choices)}"
    expected: dict[str, str] = {
        Kind.TEXT: f"text of at most {MAX_TEXT_CHARS} characters",
        Kind.NUMBER: "a finite number",
        Kind.BOOLEAN: "true or false",
        Kind.DATE: "a date as YYYY-MM-DD",
    }
    return expected.get(definition.kind, definition.kind)


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


def attribute_value_clean(definition: CustomAttributeDefinition, value: object) -> object:
    """`value` as stored for `definition`, or ValueError saying which key expects what."""
    refused = ValueError(f"'{definition.key}' expects {_expected(definition)}; got {_shown(value)}.")
    kind = definition.kind
    if kind == Kind.NUMBER:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise refused
        try:
            finite = math.isfinite(value)
        except OverflowError:  # an integer too large for a float
            finite = False
        if not finite:
            raise refused
        return value
    if kind == Kind.BOOLEAN:
        if not isinstance(value, bool):
            raise refused
        return value
    if not isinstance(value, str):
        raise refused
    # One line: values reach the AI's context, where a line break would open a section of its own.
    text = " ".join(value.split())
    if not text:
        raise ValueError(f"'{definition.key}' cannot be empty (remove it instead).")
    if kind == Kind.DATE:
        if not DATE_RE.match(text):
            raise refused
        try:
            dt.date.fromisoformat(text)
        except ValueError:
            raise refused from None
        return text
    if kind == Kind.LIST:
        match = next((str(c) for c in definition.choices if str(c).lower() == text.lower()), None)
        if match is None:
            raise refused
        return match
    if len(text) > MAX_TEXT_CHARS:
        raise ValueError(f"'{definition.key}' expects {_expected(definition)}; got {len(text)} characters.")
    return text


def attribute_value_from_text(definition: CustomAttributeDefinition, text: str) -> object | None:
    """What a form's text field means for `definition`: "" removes (None), a number or yes/no is parsed; the
    result still goes through `custom_attributes_update`, which decides whether it fits."""
    text = text.strip()
    if not text:
        return None
    if definition.kind == Kind.NUMBER:
        try:
            number = int(text) if re.fullmatch(r"[+-]?\d+", text) else float(text)
        except ValueError:
            return text  # refused with the kind's message
        return number
    if definition.kind == Kind.BOOLEAN:
        word = text.lower()
        return True if word in _TRUE else False if word in _FALSE else text
    return text


def _applies_to(target: AttributeOwner) -> str:
    if isinstance(target, Contact):
        return CustomAttributeDefinition.AppliesTo.CONTACT
    return CustomAttributeDefinition.AppliesTo.CONVERSATION


def custom_attributes_update(*, target: AttributeOwner, changes: Mapping[str, object]) -> dict[str, object]:
    """Merge `changes` into the target's `custom_attributes` (`None` removes a key) and return the result.

    Every key must be defined for the target's kind of owner (removing a key stored before its definition was
    deleted is allowed), every value of its kind. One refusal and nothing is stored:
    ValidationError({key: [message]}) names each refused key.
    """
    applies_to = _applies_to(target)
    definitions = {
        d.key: d
        for d in CustomAttributeDefinition.objects.filter(account_id=target.account_id, applies_to=applies_to)
    }
    with transaction.atomic():
        # Locked: two writers merging into one JSON document must not lose each other's keys.
        row = type(target).objects.select_for_update().only("pk", "custom_attributes").get(pk=target.pk)
        current = dict(row.custom_attributes or {})
        errors: dict[str, list[str]] = {}
        merged = dict(current)
        for key, value in changes.items():
            definition = definitions.get(key)
            if value is None and (definition is not None or key in current):
                merged.pop(key, None)
                continue
            if definition is None:
                defined = ", ".join(sorted(definitions)) or "none"
                errors[str(key)[:64]] = [
                    f"'{str(key)[:64]}' is not a {applies_to} attribute of this account (defined: {defined})."
                ]
                continue
            try:
                merged[key] = attribute_value_clean(definition, value)
            except ValueError as exc:
                errors[key] = [str(exc)]
        if errors:
            raise ValidationError(errors)
        if merged != current:
            row.custom_attributes = merged
            row.save(update_fields=["custom_attributes"])
    target.custom_attributes = merged
    return merged
