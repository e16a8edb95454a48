"""What a page says about its visitor: who they are (the widget's `setUser`), their contact attributes
(`setCustomAttributes`) and a label on their conversation (`setLabel`).

The caller has checked the identity proof (the identifier's HMAC with the inbox's secret); this module only moves
the visitor's rows. The visitor's source id on the inbox becomes the identified one, so the same person on
another device or browser, identified the same way, continues the same conversations:
- no row yet for the identified id: the visitor's row is renamed to it (their conversations stay with it);
- the identified id already has a row (and a contact, the "known contact"): the visitor's conversations move to
  it and the anonymous row is left empty.
Name and e-mail given with the identity are stored on the contact when they are non-empty.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.db import IntegrityError, transaction

from helpdesk.models import Contact, ContactInbox, Conversation, Inbox, Message

from .attributes import custom_attributes_update
from .conversations import conversation_add_label


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


def _visitor_row(*, inbox: Inbox, source_id: str) -> ContactInbox:
    """The visitor's row on the inbox, created (with an empty contact) when they have not written yet."""
    found = ContactInbox.objects.select_related("contact").filter(inbox=inbox, source_id=source_id).first()
    if found is not None:
        return found
    try:
        with transaction.atomic():
            contact = Contact.objects.create(account_id=inbox.account_id)
            return ContactInbox.objects.create(contact=contact, inbox=inbox, source_id=source_id)
    except IntegrityError:
        return ContactInbox.objects.select_related("contact").get(inbox=inbox, source_id=source_id)


def visitor_set_attributes(
    *, inbox: Inbox, source_id: str, changes: Mapping[str, object]
) -> dict[str, object]:
    """The page's `setCustomAttributes`: only the account's contact attribute definitions, each value of its kind
    (ValidationError names the refused keys; nothing is stored then)."""
    row = _visitor_row(inbox=inbox, source_id=source_id)
    return custom_attributes_update(target=row.contact, changes=changes)


def visitor_add_label(*, inbox: Inbox, source_id: str, name: str) -> bool:
    """The page's `setLabel`: one of the account's existing labels on the visitor's open conversation (a page
    cannot invent labels); False when there is no such label or no open conversation yet."""
    conversation = (
        Conversation.objects.filter(contact_inbox__inbox=inbox, contact_inbox__source_id=source_id)
        .exclude(status=Conversation.Status.RESOLVED)
        .order_by("-id")
        .first()
    )
    if conversation is None:
        return False
    added = conversation_add_label(conversation=conversation, name=name, by="The website", create=False)
    return added is not None


def visitor_set_contact(*, inbox: Inbox, source_id: str, name: str, email: str) -> None:
    """The pre-chat form: the name and e-mail an anonymous visitor typed (empty values change nothing)."""
    row = _visitor_row(inbox=inbox, source_id=source_id)
    _update_contact(row, name=name, email=email)
