"""Contacts over the REST API, through the same services and selectors as the dashboard's contacts pages.

- `accounts/<id>/contacts/`: `GET` the account's contacts, newest first (`?q=` searches name, e-mail, phone and
  `#id`; `?limit=&offset=` pages).
- `accounts/<id>/contacts/<cid>/`: `GET` one, `PATCH` its name, e-mail and/or phone (custom attributes have
  their own endpoint, `.../custom-attributes/`).
- `accounts/<id>/contacts/<cid>/merge/`: `POST {"duplicate_id": n}` merges contact n into this one (its
  conversations and channel ids follow; it is deleted). A duplicate that is not a contact of this account answers
  400 naming the field, with the same words whether it exists in another account or not.

Any member may do each (as in the dashboard). Another account's contact in the path answers 404. Notes on a
contact: `helpdesk.api.contact_notes`.
"""

from __future__ import annotations

from django.urls import path
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

import helpdesk.ids  # noqa: F401  (registers the <id:...> path converter used below)
from helpdesk.ids import MAX_ID
from helpdesk.models import Contact
from helpdesk.selectors.attributes import access_contact
from helpdesk.selectors.contacts import SEARCH_MAX_CHARS, contact_in_account, contacts_matching
from helpdesk.services.contacts import NAME_MAX_CHARS, contact_merge, contact_phone, contact_update

from . import contact_notes
from .attributes import service_errors_as_400
from .auth import AccountApi, Pagination, paginated_response


class ContactOutputSerializer(serializers.ModelSerializer):
    # A plain string: contacts made by channels may hold an e-mail no validator checked, or none ("").
    email = serializers.CharField(read_only=True)
    phone = serializers.SerializerMethodField()

    class Meta:
        model = Contact
        ref_name = "Contact"
        fields = ["id", "name", "email", "phone", "custom_attributes", "created_at"]
        read_only_fields = fields

    @extend_schema_field(serializers.CharField(allow_blank=True))
    def get_phone(self, contact: Contact) -> str:
        return contact_phone(contact)


class ContactFilterSerializer(serializers.Serializer):
    q = serializers.CharField(max_length=SEARCH_MAX_CHARS, required=False, allow_blank=True)

    class Meta:
        ref_name = "ContactFilter"


class ContactUpdateSerializer(serializers.Serializer):
    """Only the fields given change; "" empties one. The service checks the e-mail and the phone."""

    name = serializers.CharField(max_length=NAME_MAX_CHARS, required=False, allow_blank=True)
    email = serializers.EmailField(max_length=254, required=False, allow_blank=True)
    phone = serializers.CharField(max_length=31, required=False, allow_blank=True)

    class Meta:
        ref_name = "ContactUpdate"


class ContactMergeSerializer(serializers.Serializer):
    duplicate_id = serializers.IntegerField(
        min_value=1, max_value=MAX_ID, help_text="The contact merged into this one, then deleted."
    )

    class Meta:
        ref_name = "ContactMerge"


class ContactCollectionApi(AccountApi):
    """`GET` the account's contacts (`?q=` searches, `?limit=&offset=` pages)."""

    pagination_class = Pagination

    @extend_schema(parameters=[ContactFilterSerializer], responses=ContactOutputSerializer(many=True))
    def get(self, request: Request, account_id: int) -> Response:
        filters = ContactFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        return paginated_response(
            request=request,
            view=self,
            queryset=contacts_matching(account_id=self.account_id, query=filters.validated_data.get("q", "")),
            serializer_class=ContactOutputSerializer,
        )


class ContactDetailApi(AccountApi):
    """`GET` one contact, `PATCH` its name, e-mail and/or phone."""

    @extend_schema(responses=ContactOutputSerializer)
    def get(self, request: Request, account_id: int, contact_id: int) -> Response:
        contact = access_contact(account_id=self.account_id, contact_id=contact_id)
        return Response(ContactOutputSerializer(contact).data)

    @extend_schema(request=ContactUpdateSerializer, responses=ContactOutputSerializer)
    def patch(self, request: Request, account_id: int, contact_id: int) -> Response:
        contact = access_contact(account_id=self.account_id, contact_id=contact_id)
        data = ContactUpdateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        with service_errors_as_400():
            contact_update(contact=contact, **data.validated_data)
        return Response(ContactOutputSerializer(contact).data)


class ContactMergeApi(AccountApi):
    """`POST {"duplicate_id": n}`: merge contact n into this one; answers the kept contact."""

    @extend_schema(request=ContactMergeSerializer, responses=ContactOutputSerializer)
    def post(self, request: Request, account_id: int, contact_id: int) -> Response:
        kept = access_contact(account_id=self.account_id, contact_id=contact_id)
        data = ContactMergeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        duplicate_id = data.validated_data["duplicate_id"]
        duplicate = contact_in_account(account_id=self.account_id, contact_id=duplicate_id)
        if duplicate is None:
            raise serializers.ValidationError(
                {
                    "duplicate_id": [
                        f"No contact #{duplicate_id} in this account: only contacts of one account merge."
                    ]
                }
            )
        with service_errors_as_400():
            contact_merge(kept=kept, duplicate=duplicate, actor=request.user.get_username())
        return Response(ContactOutputSerializer(kept).data)


CONTACT = "accounts/<id:account_id>/contacts/<id:contact_id>/"

urlpatterns = [
    path("accounts/<id:account_id>/contacts/", ContactCollectionApi.as_view(), name="contact-list"),
    path(CONTACT, ContactDetailApi.as_view(), name="contact-detail"),
    path(f"{CONTACT}merge/", ContactMergeApi.as_view(), name="contact-merge"),
    *contact_notes.urlpatterns,
]
