"""Identifying a channel's visitor as one of the customer's own users (the widget's `setUser`).

The caller has checked the identity proof (the identifier's HMAC with the inbox's secret); this module only moves
the visitor's rows. The visitor's source id on the inbox becomes the identified one, so the same person on
another device or browser, identified the same way, continues the same conversations:
- no row yet for the identified id: the visitor's row is renamed to it (their conversations stay with it);
- the identified id already has a row (and a contact, the "known contact"): the visitor's conversations move to
  it and the anonymous row is left empty.
Name and e-mail given with the identity are stored on the contact when they are non-empty.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction

from helpdesk.models import Contact, ContactInbox, Conversation, Inbox, Message


@transaction.atomic
def visitor_identify(
    *, inbox: Inbox, source_id: str, identified_id: str, name: str = "", email: str = ""
) -> str:
    """Make `identified_id` the visitor's source id on `inbox`; returns it."""
    known = (
        ContactInbox.objects.select_for_update(no_key=True)
        .select_related("contact")
        .filter(inbox=inbox, source_id=identified_id)
        .first()
    )
    visitor = (
        ContactInbox.objects.select_for_update(no_key=True)
        .select_related("contact")
        .filter(inbox=inbox, source_id=source_id)
        .first()
    )
    if known is None and visitor is not None and source_id != identified_id:
        visitor.source_id = identified_id
        visitor.save(update_fields=["source_id"])
        known = visitor
    elif known is not None and visitor is not None and visitor.pk != known.pk:
        moved = Conversation.objects.filter(contact_inbox=visitor)
        Message.objects.filter(conversation__in=moved, sender_contact=visitor.contact).update(
            sender_contact=known.contact
        )
        moved.update(contact_inbox=known, contact=known.contact)
    if known is None:
        # Identified before their first message: the row exists from now on, so name and e-mail are kept.
        try:
            with transaction.atomic():
                contact = Contact.objects.create(account_id=inbox.account_id, name=name, email=email)
                ContactInbox.objects.create(contact=contact, inbox=inbox, source_id=identified_id)
        except IntegrityError:
            pass  # the same person identified in another tab at the same moment: the unique row decided
        return identified_id
    _update_contact(known, name=name, email=email)
    return identified_id


def _update_contact(contact_inbox: ContactInbox, *, name: str, email: str) -> None:
    contact = contact_inbox.contact
    changed = []
    if name and contact.name != name:
        contact.name = name
        changed.append("name")
    if email and contact.email != email:
        contact.email = email
        changed.append("email")
    if changed:
        contact.save(update_fields=changed)
