"""Notes about a customer for the team, on the contact's page and through the REST API. The contact (or the note)
is the caller's, fetched with the account check (another account's is a 404 before any write); a note takes the
contact's account, never one given by the caller. Any member adds a note; its author or an administrator edits
or deletes it (a colleague's words are not rewritten by someone else)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from helpdesk.models import Contact, ContactNote

NOTE_MAX_CHARS = 5000


def _clean(content: str) -> str:
    text = content.strip()
    if not text:
        raise ValidationError({"content": ["Write the note first."]})
    if len(text) > NOTE_MAX_CHARS:
        raise ValidationError({"content": [f"A note is at most {NOTE_MAX_CHARS:,} characters."]})
    return text


def contact_note_create(*, contact: Contact, author: User, content: str) -> ContactNote:
    text = _clean(content)
    with transaction.atomic():
        # The contact row locked until the note is in: a merge deleting it meanwhile (contact_merge locks it too)
        # either waits and moves the note, or went first and the note is refused here, not a foreign-key error.
        if not Contact.objects.select_for_update().filter(pk=contact.pk).exists():
            raise ValidationError("This contact was merged into another or deleted meanwhile: reopen it.")
        return ContactNote.objects.create(
            account_id=contact.account_id, contact=contact, author=author, content=text
        )


def can_change_note(*, note: ContactNote, user: AbstractBaseUser, is_admin: bool) -> bool:
    return is_admin or (note.author_id is not None and note.author_id == user.pk)


def _check_change(note: ContactNote, user: AbstractBaseUser, is_admin: bool) -> None:
    if not can_change_note(note=note, user=user, is_admin=is_admin):
        raise PermissionDenied("Only the note's author or an administrator changes it.")


def contact_note_update(
    *, note: ContactNote, user: AbstractBaseUser, is_admin: bool, content: str
) -> ContactNote:
    _check_change(note, user, is_admin)
    note.content = _clean(content)
    note.save(update_fields=["content"])
    return note


def contact_note_delete(*, note: ContactNote, user: AbstractBaseUser, is_admin: bool) -> None:
    _check_change(note, user, is_admin)
    note.delete()
