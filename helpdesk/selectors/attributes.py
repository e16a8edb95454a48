"""Reads of custom attributes: the account's definitions, a contact fetched and authorized in one call, and the
rows the conversation page shows (every defined key with its stored value)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from django.db.models import QuerySet
from django.http import Http404

from helpdesk.models import Contact, CustomAttributeDefinition


def attribute_definitions(
    *, account_id: int, applies_to: str | None = None
) -> QuerySet[CustomAttributeDefinition]:
    """The account's definitions (contact ones first, then by key), optionally of one kind of owner."""
    definitions = CustomAttributeDefinition.objects.filter(account_id=account_id).order_by(
        "applies_to", "key"
    )
    if applies_to:
        definitions = definitions.filter(applies_to=applies_to)
    return definitions


def access_attribute_definition(*, account_id: int, definition_id: int) -> CustomAttributeDefinition:
    """The definition if it belongs to the account; 404 otherwise (never reveal other tenants' objects)."""
    definition = attribute_definitions(account_id=account_id).filter(pk=definition_id).first()
    if definition is None:
        raise Http404("No such attribute definition.")
    return definition


def access_contact(*, account_id: int, contact_id: int) -> Contact:
    """The contact if it belongs to the account; 404 otherwise."""
    contact = Contact.objects.filter(account_id=account_id, pk=contact_id).first()
    if contact is None:
        raise Http404("No such contact.")
    return contact


@dataclass(frozen=True)
class AttributeRow:
    """One defined attribute as a form shows it."""

    key: str
    label: str
    description: str
    kind: str
    choices: tuple[str, ...]
    value: object
    """The stored value (None when unset)."""
    text: str
    """The value as a form field holds it: "" when unset, "true"/"false" for yes/no, the ISO date, the number."""

    @property
    def is_set(self) -> bool:
        return self.value is not None


def attribute_value_text(value: object) -> str:
    """How a stored value reads in a form field (and how an unchanged field posts it back)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def attribute_rows(
    *, definitions: Iterable[CustomAttributeDefinition], values: Mapping[str, object]
) -> list[AttributeRow]:
    """Every definition with its value in `values` (a `custom_attributes` dict), in the definitions' order."""
    return [
        AttributeRow(
            key=d.key,
            label=d.label,
            description=d.description,
            kind=d.kind,
            choices=tuple(str(c) for c in d.choices or ()),
            value=values.get(d.key),
            text=attribute_value_text(values.get(d.key)),
        )
        for d in definitions
    ]
