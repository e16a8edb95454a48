"""Writes of contacts from the dashboard and the API: edit a contact, merge two duplicates, import a CSV file.

Every function takes contacts already fetched for the caller's account (`access_contact`) or an `account_id`, and
refuses to mix two accounts itself as well, so a caller that forgot a check still cannot move one tenant's
conversations to another. Refusals are `ValidationError`s whose messages a person can act on.

The phone number is the contact's `phone` column (migration 0015 moved it out of the reserved `phone` key of
`custom_attributes`, where it lived before), validated here; `phone` stays a reserved attribute key.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.db.models.functions import Lower
from django.utils.translation import gettext as _

from helpdesk.models import Contact, ContactInbox, Conversation, CustomAttributeDefinition
from helpdesk.services.activities import message_create_activity
from helpdesk.services.attributes import (
    attribute_value_clean,
    attribute_value_from_text,
    custom_attributes_update,
)

PHONE_KEY = "phone"
"""A reserved contact attribute key: the phone is a column (a definition named `phone` is not offered)."""
NAME_MAX_CHARS = 200
PHONE_RE = re.compile(r"^\+?[0-9][0-9 ()./-]{2,30}$")
CSV_MAX_BYTES = 5 * 1024 * 1024
CSV_MAX_ROWS = 10_000
CSV_BASE_COLUMNS = ("name", "email", "phone")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""A cell starting so is a formula to a spreadsheet: the export puts a ' before it, the import takes it off."""
CSV_MAX_ERRORS = 50
"""An import with more bad rows stops listing them: nobody reads 10,000 errors, and the file must be fixed."""


def contact_phone(contact: Contact) -> str:
    return contact.phone


def _clean_fields(*, name: str | None, email: str | None, phone: str | None) -> dict[str, str]:
    """The given fields trimmed and checked; ValidationError({field: [message]}) names every bad one."""
    cleaned: dict[str, str] = {}
    errors: dict[str, list[str]] = {}
    if name is not None:
        cleaned["name"] = name.strip()
        if len(cleaned["name"]) > NAME_MAX_CHARS:
            errors["name"] = [
                _("At most %(max)s characters (got %(got)s).")
                % {"max": NAME_MAX_CHARS, "got": f"{len(cleaned['name']):,}"}
            ]
        elif "\x00" in cleaned["name"]:  # PostgreSQL refuses NUL in text: a clear error here, not a 500 there
            errors["name"] = [_("A name cannot contain NUL characters.")]
    if email is not None:
        cleaned["email"] = email.strip().lower()
        if cleaned["email"]:
            try:
                validate_email(cleaned["email"])
            except ValidationError:
                errors["email"] = [
                    _("“%(email)s” is not an e-mail address.") % {"email": cleaned["email"][:80]}
                ]
    if phone is not None:
        cleaned["phone"] = phone.strip()
        if cleaned["phone"] and not PHONE_RE.match(cleaned["phone"]):
            errors["phone"] = [
                _("“%(phone)s” is not a phone number (digits, spaces, + ( ) . / -; 3 to 31 characters).")
                % {"phone": cleaned["phone"][:40]}
            ]
    if errors:
        raise ValidationError(errors)
    return cleaned


def _apply(contact: Contact, cleaned: Mapping[str, str]) -> list[str]:
    """Set the cleaned fields on the contact; the names of the columns that changed."""
    changed = []
    for name in ("name", "email", "phone"):
        if name in cleaned and getattr(contact, name) != cleaned[name]:
            setattr(contact, name, cleaned[name])
            changed.append(name)
    return changed


def contact_update(
    *,
    contact: Contact,
    name: str | None = None,
    email: str | None = None,
    phone: str | None = None,
    attributes: Mapping[str, object] | None = None,
) -> Contact:
    """Change the contact's name, e-mail, phone (None leaves a field as it is, "" empties it) and custom
    attributes (`custom_attributes_update`'s rules). All or nothing: one refused value and nothing is stored."""
    cleaned = _clean_fields(name=name, email=email, phone=phone)
    with transaction.atomic():
        # Locked and re-read: the attributes panel merges into the same row's JSON document.
        row = Contact.objects.select_for_update().get(pk=contact.pk)
        changed = _apply(row, cleaned)
        if changed:
            row.save(update_fields=changed)
        if attributes:
            custom_attributes_update(target=row, changes=attributes)
    for name in ("name", "email", "phone", "custom_attributes"):
        setattr(contact, name, getattr(row, name))
    return contact


# ---- merge ---------------------------------------------------------------------------------------------------


def _label(contact: Contact) -> str:
    return f"{contact} (#{contact.pk})"


def _move_other_relations(*, duplicate: Contact, kept: Contact) -> None:
    """Rows of other apps that point at the duplicate (the AI's memory of the customer, say) follow it too.

    Found through the model's relations because helpdesk must not import those apps. A row the kept contact
    already has an equivalent of (a unique constraint says so) stays with the duplicate and is deleted with it:
    the kept contact's own value wins.
    """
    for relation in Contact._meta.related_objects:
        model = relation.related_model
        if not isinstance(model, type) or model in (Conversation, ContactInbox) or not relation.one_to_many:
            continue
        name = relation.field.name
        for pk in model._default_manager.filter(**{name: duplicate}).values_list("pk", flat=True):
            try:
                with transaction.atomic():
                    model._default_manager.filter(pk=pk).update(**{name: kept})
            except IntegrityError:
                continue


def contact_merge(*, kept: Contact, duplicate: Contact, actor: str) -> Contact:
    """Merge `duplicate` into `kept` and delete it.

    Its conversations and the ids channels know it by (contact inboxes) move to `kept`; fields `kept` has empty
    (name, e-mail, phone, custom attributes) take the duplicate's values. Each moved conversation gets an
    activity line saying who merged whom (the kept contact's latest conversation if none moved). Refused when
    the two are the same contact or belong to different accounts.
    """
    if kept.account_id != duplicate.account_id:
        raise ValidationError(
            "These contacts belong to different accounts: only contacts of the same account can be merged."
        )
    if kept.pk == duplicate.pk:
        raise ValidationError("A contact cannot be merged into itself: pick the duplicate.")
    line = f"{actor} merged contact {_label(duplicate)} into {_label(kept)}."
    with transaction.atomic():
        # Both rows locked in id order, so two merges of the same pair cannot deadlock or merge twice.
        locked = {c.pk: c for c in Contact.objects.select_for_update().filter(pk__in=[kept.pk, duplicate.pk])}
        if len(locked) != 2:
            raise ValidationError("One of the two contacts was deleted meanwhile (merged already?).")
        row, other = locked[kept.pk], locked[duplicate.pk]
        moved = list(Conversation.objects.filter(contact_id=other.pk).only("pk", "account_id", "inbox_id"))
        Conversation.objects.filter(contact_id=other.pk).update(contact_id=row.pk)
        ContactInbox.objects.filter(contact_id=other.pk).update(contact_id=row.pk)
        _move_other_relations(duplicate=other, kept=row)
        filled = _fill_empty(row, other)
        if filled:
            row.save(update_fields=filled)
        other.delete()
        if not moved:
            latest = (
                Conversation.objects.filter(contact_id=row.pk)
                .only("pk", "account_id", "inbox_id")
                .order_by("-last_activity_at", "-pk")
                .first()
            )
            moved = [latest] if latest else []
        for conversation in moved:
            message_create_activity(conversation=conversation, content=line)
    for name in ("name", "email", "phone", "custom_attributes"):
        setattr(kept, name, getattr(row, name))
    return kept


def _fill_empty(row: Contact, other: Contact) -> list[str]:
    changed = []
    for name in ("name", "email", "phone"):
        if not getattr(row, name) and getattr(other, name):
            setattr(row, name, getattr(other, name))
            changed.append(name)
    theirs = {
        k: v for k, v in (other.custom_attributes or {}).items() if k not in (row.custom_attributes or {})
    }
    if theirs:
        row.custom_attributes = {**(row.custom_attributes or {}), **theirs}
        changed.append("custom_attributes")
    return changed


# ---- CSV import ----------------------------------------------------------------------------------------------


@dataclass
class ImportResult:
    created: int = 0
    updated: int = 0


@dataclass
class _Row:
    line: int
    fields: dict[str, str]
    attributes: dict[str, object] = field(default_factory=dict)


class ContactImportError(ValidationError):
    """The file was refused as a whole; `errors` lists each problem as 'Line N: ...' (nothing was stored)."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__(errors)
        self.errors = errors


def _decode(data: bytes) -> str:
    if len(data) > CSV_MAX_BYTES:
        raise ContactImportError(
            [_("The file is over %(mb)s MB: split it.") % {"mb": CSV_MAX_BYTES // (1024 * 1024)}]
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ContactImportError(
            [
                _("The file is not UTF-8 text (byte %(byte)s): save it as CSV UTF-8 and try again.")
                % {"byte": exc.start + 1}
            ]
        ) from exc
    if "\x00" in text:  # csv reads NUL since Python 3.11, but PostgreSQL refuses it in text
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise ContactImportError(
            [_("Line %(line)s: a NUL character; the file is not plain CSV text.") % {"line": line}]
        )
    return text


def _header(cells: list[str], definitions: Mapping[str, CustomAttributeDefinition]) -> list[str]:
    columns = [c.strip().lower() for c in cells]
    if not any(columns):
        raise ContactImportError([_("Line 1: the first line names the columns (name,email,phone).")])
    known = set(CSV_BASE_COLUMNS) | set(definitions)
    unknown = [c for c in columns if c not in known]
    if unknown:
        raise ContactImportError(
            [
                _("Line 1: unknown column(s) %(unknown)s; known: %(known)s.")
                % {
                    "unknown": ", ".join(repr(c[:40]) for c in unknown[:10]),
                    "known": ", ".join(sorted(known)),
                }
            ]
        )
    if not set(CSV_BASE_COLUMNS) & set(columns):
        raise ContactImportError([_("Line 1: the file needs a name, email or phone column.")])
    return columns


def _parse_rows(
    text: str, definitions: Mapping[str, CustomAttributeDefinition]
) -> tuple[list[_Row], list[str]]:
    """Every data row cleaned, and every problem as 'Line N: ...' (N counts physical lines as an editor does,
    so a quoted value over several lines does not shift the numbers of the rows after it)."""
    # csv.reader rather than DictReader: it yields blank lines as [] instead of skipping them, so the line a
    # record starts on is always the previous record's last line + 1.
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[_Row] = []
    errors: list[str] = []
    try:
        header = next(reader, None)
        if header is None:
            raise ContactImportError(
                [_("The file is empty: the first line names the columns (name,email,phone).")]
            )
        columns = _header(header, definitions)
        start = reader.line_num + 1
        for cells in reader:
            line, start = start, reader.line_num + 1
            if len(rows) >= CSV_MAX_ROWS:
                raise ContactImportError(
                    [_("More than %(rows)s rows: split the file.") % {"rows": f"{CSV_MAX_ROWS:,}"}]
                )
            if len(cells) > len(columns):
                errors.append(
                    _("Line %(line)s: %(values)s values for %(columns)s columns.")
                    % {"line": line, "values": len(cells), "columns": len(columns)}
                )
            elif any(cell.strip() for cell in cells):  # a blank line in a spreadsheet export is no error
                values = dict(zip(columns, map(_unquoted, cells), strict=False))
                row = _parse_row(line, values, definitions, errors)
                rows += [row] if row else []
            if len(errors) >= CSV_MAX_ERRORS:
                errors.append(_("Stopped after %(n)s bad rows.") % {"n": CSV_MAX_ERRORS})
                break
    except csv.Error as exc:
        errors.append(
            _("Line %(line)s: not readable as CSV (%(why)s).") % {"line": reader.line_num, "why": exc}
        )
    return rows, errors


def _unquoted(cell: str) -> str:
    return cell[1:] if cell.startswith("'") and cell[1:2] and cell[1] in FORMULA_STARTS else cell


def _parse_row(
    line: int, values: dict[str, str], definitions: Mapping[str, CustomAttributeDefinition], errors: list[str]
) -> _Row | None:
    problems: list[str] = []
    try:
        fields = _clean_fields(**{c: values.get(c) for c in CSV_BASE_COLUMNS})
    except ValidationError as exc:
        fields = {}
        problems += [f"{k}: {m}" for k, messages in exc.message_dict.items() for m in messages]
    row = _Row(line=line, fields=fields)
    for key, definition in definitions.items():
        if values.get(key, "").strip():
            try:
                value = attribute_value_from_text(definition, values[key])
                row.attributes[key] = attribute_value_clean(definition, value)
            except ValueError as exc:
                problems.append(f"{key}: {exc}")
    if not any(fields.get(c) for c in CSV_BASE_COLUMNS) and not problems:
        problems.append(_("a contact needs a name, an e-mail or a phone."))
    if problems:
        errors.append(_("Line %(line)s: %(problems)s") % {"line": line, "problems": " ".join(problems)})
        return None
    return row


def contacts_import_csv(*, account_id: int, data: bytes) -> ImportResult:
    """Create the file's contacts, or update the account's contact with the same e-mail (export, edit, import).

    All or nothing: every row is checked first and one bad row refuses the whole file, with
    ContactImportError listing each bad row by its line number. A row's empty cell leaves a field as it is.
    """
    definitions = {
        d.key: d
        for d in CustomAttributeDefinition.objects.filter(
            account_id=account_id, applies_to=CustomAttributeDefinition.AppliesTo.CONTACT
        ).exclude(key=PHONE_KEY)
    }
    rows, errors = _parse_rows(_decode(data), definitions)
    seen: dict[str, int] = {}
    for row in rows:
        email = row.fields.get("email", "")
        if email and email in seen:
            errors.append(
                _("Line %(line)s: the e-mail %(email)s is on line %(other)s too.")
                % {"line": row.line, "email": email, "other": seen[email]}
            )
        elif email:
            seen[email] = row.line
    if errors:
        raise ContactImportError(errors)
    if not rows:
        raise ContactImportError(["The file has no contacts (only a header or blank lines)."])
    return _store(account_id=account_id, rows=rows)


def _store(*, account_id: int, rows: list[_Row]) -> ImportResult:
    result = ImportResult()
    emails = [row.fields["email"] for row in rows if row.fields.get("email")]
    with transaction.atomic():
        existing = {
            c.email.lower(): c
            for c in Contact.objects.select_for_update()
            .annotate(email_lower=Lower("email"))
            .filter(account_id=account_id, email_lower__in=emails)
        }
        new: list[Contact] = []
        for row in rows:
            fields = {k: v for k, v in row.fields.items() if v}
            contact = existing.get(fields.get("email", "")) or Contact(account_id=account_id)
            _apply(contact, fields)
            if row.attributes:
                contact.custom_attributes = {**(contact.custom_attributes or {}), **row.attributes}
            if contact.pk is None:
                new.append(contact)
            else:
                contact.save(update_fields=["name", "email", "custom_attributes"])
                result.updated += 1
        Contact.objects.bulk_create(new, batch_size=500)
        result.created = len(new)
    return result
