"""Notes about a customer for the team, on the contact's page. The contact is the caller's, fetched through
`helpdesk.selectors.contacts.access_contact` (another account's is a 404 before any write); the note takes the
contact's account, never one given by the caller."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError

from helpdesk.models import Contact, ContactNote

NOTE_MAX_CHARS = 5000


def contact_note_create(*, contact: Contact, author: User, content: str) -> ContactNote:
    text = content.strip()
    if not text:
        raise ValidationError({"content": ["Write the note first."]})
    if len(text) > NOTE_MAX_CHARS:
        raise ValidationError({"content": [f"A note is at most {NOTE_MAX_CHARS:,} characters."]})
    return ContactNote.objects.create(
        account_id=contact.account_id, contact=contact, author=author, content=text
    )
