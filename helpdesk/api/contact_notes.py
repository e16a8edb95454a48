"""Notes on a contact over the REST API, through the same services as the contact's page.

- `accounts/<id>/contacts/<cid>/notes/`: `GET` the contact's notes, newest first (`?limit=&offset=`), `POST
  {"content": "..."}` adds one (any member).
- `accounts/<id>/contacts/<cid>/notes/<nid>/`: `PATCH {"content": "..."}` or `DELETE`, by the note's author or an
  administrator (403 for anyone else).

Another account's contact or note in the path answers 404; an empty or over-long note answers 400 naming
`content`, and nothing changes.
"""

from __future__ import annotations

from django.http import Http404
from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

import helpdesk.ids  # noqa: F401  (registers the <id:...> path converter used below)
from helpdesk.models import ContactNote, Membership
from helpdesk.selectors.attributes import access_contact
from helpdesk.selectors.contacts import contact_note_in_account, contact_notes_all
from helpdesk.services.contact_notes import (
    NOTE_MAX_CHARS,
    contact_note_create,
    contact_note_delete,
    contact_note_update,
)

from .attributes import service_errors_as_400
from .auth import AccountApi, Pagination, paginated_response


class ContactNoteOutputSerializer(serializers.ModelSerializer):
    author = serializers.SerializerMethodField()

    class Meta:
        model = ContactNote
        ref_name = "ContactNote"
        fields = ["id", "contact", "author", "content", "created_at"]
        read_only_fields = fields

    def get_author(self, note: ContactNote) -> str | None:
        return note.author.get_username() if note.author else None


class ContactNoteInputSerializer(serializers.Serializer):
    # The service strips and checks the text; the length here stops a huge body before it.
    content = serializers.CharField(max_length=NOTE_MAX_CHARS + 1000, trim_whitespace=False)

    class Meta:
        ref_name = "ContactNoteInput"


class ContactNoteCollectionApi(AccountApi):
    """`GET` the contact's notes (newest first), `POST` a new one."""

    pagination_class = Pagination

    @extend_schema(responses=ContactNoteOutputSerializer(many=True))
    def get(self, request: Request, account_id: int, contact_id: int) -> Response:
        contact = access_contact(account_id=self.account_id, contact_id=contact_id)
        return paginated_response(
            request=request,
            view=self,
            queryset=contact_notes_all(account_id=self.account_id, contact_id=contact.pk),
            serializer_class=ContactNoteOutputSerializer,
        )

    @extend_schema(request=ContactNoteInputSerializer, responses={201: ContactNoteOutputSerializer})
    def post(self, request: Request, account_id: int, contact_id: int) -> Response:
        contact = access_contact(account_id=self.account_id, contact_id=contact_id)
        data = ContactNoteInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        with service_errors_as_400():
            note = contact_note_create(
                contact=contact, author=request.user, content=data.validated_data["content"]
            )
        return Response(ContactNoteOutputSerializer(note).data, status=status.HTTP_201_CREATED)


class ContactNoteDetailApi(AccountApi):
    """`GET` a note, `PATCH` its text, `DELETE` it (changes: its author or an administrator)."""

    def _note(self, contact_id: int, note_id: int) -> ContactNote:
        note = contact_note_in_account(account_id=self.account_id, contact_id=contact_id, note_id=note_id)
        if note is None:
            raise Http404("No such note.")
        return note

    @property
    def _is_admin(self) -> bool:
        return self.membership.role == Membership.Role.ADMIN

    @extend_schema(responses=ContactNoteOutputSerializer)
    def get(self, request: Request, account_id: int, contact_id: int, note_id: int) -> Response:
        return Response(ContactNoteOutputSerializer(self._note(contact_id, note_id)).data)

    @extend_schema(request=ContactNoteInputSerializer, responses=ContactNoteOutputSerializer)
    def patch(self, request: Request, account_id: int, contact_id: int, note_id: int) -> Response:
        note = self._note(contact_id, note_id)
        data = ContactNoteInputSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        if "content" not in data.validated_data:
            # An empty PATCH changes nothing and answers the note, as every PATCH of the API does.
            return Response(ContactNoteOutputSerializer(note).data)
        with service_errors_as_400():
            contact_note_update(
                note=note, user=request.user, is_admin=self._is_admin, content=data.validated_data["content"]
            )
        return Response(ContactNoteOutputSerializer(note).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, account_id: int, contact_id: int, note_id: int) -> Response:
        note = self._note(contact_id, note_id)
        contact_note_delete(note=note, user=request.user, is_admin=self._is_admin)
        return Response(status=status.HTTP_204_NO_CONTENT)


NOTES = "accounts/<id:account_id>/contacts/<id:contact_id>/notes/"

urlpatterns = [
    path(NOTES, ContactNoteCollectionApi.as_view(), name="contact-note-list"),
    path(f"{NOTES}<id:note_id>/", ContactNoteDetailApi.as_view(), name="contact-note-detail"),
]
