"""The contacts pages: the account's customers, searchable by name, e-mail, phone or #id; one contact's page
(edit, their conversations, merge a duplicate into them); CSV export and import.

Any member may search, edit and merge (as on the conversation page, where agents already edit a contact's
attributes). Export and import handle the whole customer base at once, so they are for administrators. Every
contact is fetched for the URL's account: another tenant's contact is a 404, and a merge that names one is
refused with a message (helpdesk.services.contacts refuses it again).
"""

from __future__ import annotations

import csv

from django.contrib import messages as flash
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import URLPattern, path
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_POST

from helpdesk.ids import MAX_ID
from helpdesk.models import Contact, ContactNote, CustomAttributeDefinition, Membership
from helpdesk.selectors.attributes import (
    access_contact,
    attribute_definitions,
    attribute_rows,
    attribute_value_text,
)
from helpdesk.selectors.contacts import (
    SEARCH_MAX_CHARS,
    contact_channel_ids,
    contact_conversations,
    contact_in_account,
    contact_note_in_account,
    contact_notes,
    contact_page,
    contacts_for_export,
    possible_duplicates,
)
from helpdesk.services.attributes import attribute_value_from_text
from helpdesk.services.contact_notes import (
    NOTE_MAX_CHARS,
    can_change_note,
    contact_note_create,
    contact_note_delete,
    contact_note_update,
)
from helpdesk.services.contacts import (
    CSV_BASE_COLUMNS,
    CSV_MAX_BYTES,
    FORMULA_STARTS,
    PHONE_KEY,
    ContactImportError,
    contact_merge,
    contact_phone,
    contact_update,
    contacts_import_csv,
)

from .attributes import FIELD_PREFIX
from .base import ACCOUNT, AuthenticatedHttpRequest, account_view, frame_context, is_admin

CONTACT = f"{ACCOUNT}contacts/<id:contact_id>/"


def _error_text(exc: ValidationError) -> str:
    if hasattr(exc, "error_dict"):
        return " ".join(f"{name}: {m}" for name, ms in exc.message_dict.items() for m in ms)
    return " ".join(exc.messages)


def _contact_definitions(account_id: int) -> list[CustomAttributeDefinition]:
    """The account's contact attributes, without `phone`: the page edits the phone as a field of its own."""
    definitions = attribute_definitions(
        account_id=account_id, applies_to=CustomAttributeDefinition.AppliesTo.CONTACT
    )
    return [d for d in definitions if d.key != PHONE_KEY]


@require_GET
@account_view()
def contact_list(request: HttpRequest, membership: Membership) -> HttpResponse:
    """`?q=` searches names, e-mails, phones and ids; `?page=` pages (25 a page)."""
    query = request.GET.get("q", "")
    error = ""
    if len(query) > SEARCH_MAX_CHARS:
        error = _("Search for at most %(max)s characters (got %(got)s): shorten it.") % {
            "max": SEARCH_MAX_CHARS,
            "got": f"{len(query):,}",
        }
    page = (
        None
        if error
        else contact_page(account_id=membership.account_id, query=query, page=request.GET.get("page"))
    )
    return render(
        request,
        "dashboard/contacts_list.html",
        frame_context(request, membership, page=page, query=query[:SEARCH_MAX_CHARS], search_error=error),
    )


@require_GET
@account_view()
def contact_detail(
    request: AuthenticatedHttpRequest, membership: Membership, contact_id: int
) -> HttpResponse:
    contact = access_contact(account_id=membership.account_id, contact_id=contact_id)
    account_id = membership.account_id
    context = frame_context(
        request,
        membership,
        contact=contact,
        phone=contact_phone(contact),
        attribute_rows=attribute_rows(
            definitions=_contact_definitions(account_id), values=contact.custom_attributes or {}
        ),
        conversations=contact_conversations(account_id=account_id, contact_id=contact.pk, user=request.user),
        channel_ids=contact_channel_ids(account_id=account_id, contact_id=contact.pk),
        duplicates=possible_duplicates(contact=contact),
        notes=_notes_with_rights(request, membership, contact),
        note_max=NOTE_MAX_CHARS,
    )
    return render(request, "dashboard/contact_detail.html", context)


@require_POST
@account_view()
def contact_note_add(
    request: AuthenticatedHttpRequest, membership: Membership, contact_id: int
) -> HttpResponse:
    """Add a note about the contact (any member); another account's contact is a 404."""
    contact = access_contact(account_id=membership.account_id, contact_id=contact_id)
    try:
        contact_note_create(contact=contact, author=request.user, content=request.POST.get("content", ""))
    except ValidationError as exc:
        flash.error(request, _("Note not added: %(why)s") % {"why": " ".join(exc.messages)})
    else:
        flash.success(request, _("Note added."))
    return redirect("dashboard:contact-detail", membership.account_id, contact.pk)


def _notes_with_rights(
    request: AuthenticatedHttpRequest, membership: Membership, contact: Contact
) -> list[ContactNote]:
    notes = contact_notes(account_id=membership.account_id, contact_id=contact.pk)
    for note in notes:
        note.changeable = can_change_note(note=note, user=request.user, is_admin=is_admin(membership))  # type: ignore[attr-defined]  # for the template
    return notes


@require_POST
@account_view()
def contact_note_change(
    request: AuthenticatedHttpRequest, membership: Membership, contact_id: int, note_id: int
) -> HttpResponse:
    """Edit (`content`) or delete (`action=delete`) a note: its author or an administrator; another account's
    note is a 404, someone else's a 403."""
    note = contact_note_in_account(account_id=membership.account_id, contact_id=contact_id, note_id=note_id)
    if note is None:
        raise Http404("No such note.")
    try:
        if request.POST.get("action") == "delete":
            contact_note_delete(note=note, user=request.user, is_admin=is_admin(membership))
            flash.success(request, _("Note deleted."))
        else:
            content = request.POST.get("content", "")
            contact_note_update(note=note, user=request.user, is_admin=is_admin(membership), content=content)
            flash.success(request, _("Note saved."))
    except ValidationError as exc:
        flash.error(request, _("Note not saved: %(why)s") % {"why": " ".join(exc.messages)})
    return redirect("dashboard:contact-detail", membership.account_id, contact_id)


def _attribute_changes(request: HttpRequest, contact: Contact, account_id: int) -> dict[str, object]:
    """Only the fields whose text differs from what the page showed (as the conversation's attributes panel)."""
    current = contact.custom_attributes or {}
    changes: dict[str, object] = {}
    for definition in _contact_definitions(account_id):
        text = request.POST.get(f"{FIELD_PREFIX}{definition.key}")
        if text is None or text.strip() == attribute_value_text(current.get(definition.key)).strip():
            continue
        changes[definition.key] = attribute_value_from_text(definition, text)
    return changes


@require_POST
@account_view()
def contact_edit(request: HttpRequest, membership: Membership, contact_id: int) -> HttpResponse:
    contact = access_contact(account_id=membership.account_id, contact_id=contact_id)
    try:
        contact_update(
            contact=contact,
            name=request.POST.get("name"),
            email=request.POST.get("email"),
            phone=request.POST.get("phone"),
            attributes=_attribute_changes(request, contact, membership.account_id),
        )
    except ValidationError as exc:
        flash.error(request, _("Nothing saved: %(why)s") % {"why": _error_text(exc)})
    else:
        flash.success(request, _("Contact saved."))
    return redirect("dashboard:contact-detail", membership.account_id, contact.pk)


@require_POST
@account_view()
def contact_merge_view(
    request: AuthenticatedHttpRequest, membership: Membership, contact_id: int
) -> HttpResponse:
    """Merge the contact posted as `duplicate` (its id, `#12` too) into this one."""
    kept = access_contact(account_id=membership.account_id, contact_id=contact_id)
    back = redirect("dashboard:contact-detail", membership.account_id, kept.pk)
    typed = request.POST.get("duplicate", "").strip().removeprefix("#")
    # Past MAX_ID PostgreSQL would refuse the lookup (bigint): such a number is no contact's, say so instead.
    if not (typed.isascii() and typed.isdigit() and len(typed) < 20 and 1 <= int(typed) <= MAX_ID):
        flash.error(request, _("Give the duplicate's contact number (the # on its page or in the list)."))
        return back
    duplicate = contact_in_account(account_id=membership.account_id, contact_id=int(typed))
    if duplicate is None:
        # The same words whether it is missing or another account's: never confirm another tenant's contact.
        flash.error(
            request,
            _("No contact #%(typed)s in this account: only contacts of one account can be merged.")
            % {"typed": typed},
        )
        return back
    try:
        contact_merge(kept=kept, duplicate=duplicate, actor=request.user.get_username())
    except ValidationError as exc:
        flash.error(request, _("Not merged: %(why)s") % {"why": _error_text(exc)})
        return back
    flash.success(
        request, _("Merged %(name)s (#%(id)s) into this contact.") % {"name": duplicate, "id": duplicate.pk}
    )
    return back


def _cell(value: object) -> str:
    """A cell a spreadsheet will not run as a formula (the import strips the leading quote again)."""
    text = "" if value is None else attribute_value_text(value)
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text


@require_GET
@account_view(admin_only=True)
def contacts_export(request: HttpRequest, membership: Membership) -> HttpResponse:
    """Every contact as CSV: name, email, phone, then one column per contact attribute (what the import reads).

    Written into one response rather than streamed (account_view's pages are HttpResponses); the rows are read in
    chunks, and 100,000 contacts make a file of about 10 MB."""
    keys = [d.key for d in _contact_definitions(membership.account_id)]
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="contacts-{membership.account_id}.csv"'
    writer = csv.writer(response)
    writer.writerow([*CSV_BASE_COLUMNS, *keys])
    for contact in contacts_for_export(account_id=membership.account_id):
        values = contact.custom_attributes or {}
        writer.writerow(
            [_cell(contact.name), _cell(contact.email), _cell(contact_phone(contact))]
            + [_cell(values.get(key)) for key in keys]
        )
    return response


@require_POST
@account_view(admin_only=True)
def contacts_import(request: HttpRequest, membership: Membership) -> HttpResponse:
    """A CSV file as `file`: all its contacts or none, each bad row's error named with its line number."""
    back = redirect("dashboard:contacts", membership.account_id)
    upload = request.FILES.get("file")
    if upload is None:
        flash.error(request, _("Choose a CSV file to import."))
        return back
    if upload.size is not None and upload.size > CSV_MAX_BYTES:
        flash.error(
            request,
            _("Nothing imported: the file is over %(mb)s MB.") % {"mb": CSV_MAX_BYTES // (1024 * 1024)},
        )
        return back
    try:
        result = contacts_import_csv(account_id=membership.account_id, data=upload.read())
    except ContactImportError as exc:
        flash.error(
            request,
            ngettext(
                "Nothing imported: fix this and try again.",
                "Nothing imported: fix these and try again.",
                len(exc.errors),
            ),
        )
        for error in exc.errors:
            flash.error(request, error)
        return back
    flash.success(
        request,
        _("Imported: %(created)s new contact(s), %(updated)s updated.")
        % {"created": result.created, "updated": result.updated},
    )
    return back


urlpatterns: list[URLPattern] = [
    path(f"{ACCOUNT}contacts/", contact_list, name="contacts"),
    path(f"{ACCOUNT}contacts/export/", contacts_export, name="contacts-export"),
    path(f"{ACCOUNT}contacts/import/", contacts_import, name="contacts-import"),
    path(CONTACT, contact_detail, name="contact-detail"),
    path(f"{CONTACT}edit/", contact_edit, name="contact-edit"),
    path(f"{CONTACT}merge/", contact_merge_view, name="contact-merge"),
    path(f"{CONTACT}notes/", contact_note_add, name="contact-note-add"),
    path(f"{CONTACT}notes/<id:note_id>/", contact_note_change, name="contact-note-change"),
]
