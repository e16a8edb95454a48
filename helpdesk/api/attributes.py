"""Custom attributes over the REST API.

- `accounts/<id>/attribute-definitions/[<did>/]`: the account's typed definitions; members read, administrators
  create, change (label, description, kind, choices; the key stays) and delete.
- `accounts/<id>/contacts/<cid>/custom-attributes/` and `accounts/<id>/conversations/<cid>/custom-attributes/`:
  `GET` the values, `PATCH {"custom_attributes": {key: value}}` merges (`null` removes a key). Any member may
  write. A key the account has not defined or a value not of the key's kind answers 400 naming the key and the
  kind it expects, and nothing of the request is stored.

Another account's definition, contact or conversation answers 404, like a missing one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.core.exceptions import ValidationError
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from helpdesk.models import CustomAttributeDefinition
from helpdesk.models.attributes import ATTRIBUTE_KEY_RE
from helpdesk.selectors import access_conversation
from helpdesk.selectors.attributes import access_attribute_definition, access_contact, attribute_definitions
from helpdesk.services.attributes import (
    MAX_CHOICE_CHARS,
    MAX_CHOICES,
    AttributeOwner,
    attribute_definition_create,
    attribute_definition_delete,
    attribute_definition_update,
    custom_attributes_update,
)

from .auth import AccountAdminOrReadOnlyApi, AccountApi
from .schema import pattern_field

MAX_KEYS_PER_WRITE = 100


@contextmanager
def service_errors_as_400(field: str | None = None) -> Iterator[None]:
    """A service's `ValidationError({name: [messages]})` answers 400 with that body (under `field` if given)."""
    try:
        yield
    except ValidationError as exc:
        detail = exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        raise serializers.ValidationError({field: detail} if field else detail) from exc


# ---- definitions -------------------------------------------------------------------------------------------


class DefinitionOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = CustomAttributeDefinition
        ref_name = "AttributeDefinition"
        fields = ["id", "applies_to", "key", "label", "description", "kind", "choices", "created_at"]
        read_only_fields = fields


class DefinitionInputSerializer(serializers.Serializer):
    """The shape of a write; the rules (key format and uniqueness, choices of a list) are the service's."""

    applies_to = serializers.ChoiceField(choices=CustomAttributeDefinition.AppliesTo.choices)
    key = pattern_field(
        ATTRIBUTE_KEY_RE, "Lowercase letters, digits and _, starting with a letter.", max_length=64
    )
    label = serializers.CharField(max_length=200)
    description = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")
    kind = serializers.ChoiceField(
        choices=CustomAttributeDefinition.Kind.choices, default=CustomAttributeDefinition.Kind.TEXT
    )
    choices = serializers.ListField(
        child=serializers.CharField(max_length=MAX_CHOICE_CHARS), max_length=MAX_CHOICES, default=list
    )

    class Meta:
        ref_name = "AttributeDefinitionInput"


class DefinitionUpdateSerializer(serializers.Serializer):
    label = serializers.CharField(max_length=200, required=False)
    description = serializers.CharField(max_length=500, required=False, allow_blank=True)
    kind = serializers.ChoiceField(choices=CustomAttributeDefinition.Kind.choices, required=False)
    choices = serializers.ListField(
        child=serializers.CharField(max_length=MAX_CHOICE_CHARS), max_length=MAX_CHOICES, required=False
    )

    class Meta:
        ref_name = "AttributeDefinitionUpdate"

    def validate(self, attrs: dict) -> dict:
        fixed = sorted({"applies_to", "key"} & set(self.initial_data or {}))
        if fixed:
            # Values are stored under the key: changing it would orphan them silently.
            raise serializers.ValidationError({name: ["This field cannot be changed."] for name in fixed})
        return attrs


class DefinitionCollectionApi(AccountAdminOrReadOnlyApi):
    """`GET` the account's definitions (`?applies_to=contact|conversation`) / `POST` one (administrators)."""

    class FilterSerializer(serializers.Serializer):
        applies_to = serializers.ChoiceField(
            choices=CustomAttributeDefinition.AppliesTo.choices, required=False
        )

        class Meta:
            ref_name = "AttributeDefinitionFilter"

    @extend_schema(parameters=[FilterSerializer], responses=DefinitionOutputSerializer(many=True))
    def get(self, request: Request, account_id: int) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        definitions = attribute_definitions(
            account_id=self.account_id, applies_to=filters.validated_data.get("applies_to")
        )
        return Response(DefinitionOutputSerializer(definitions, many=True).data)

    @extend_schema(request=DefinitionInputSerializer, responses={201: DefinitionOutputSerializer})
    def post(self, request: Request, account_id: int) -> Response:
        data = DefinitionInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        with service_errors_as_400():
            definition = attribute_definition_create(account_id=self.account_id, **data.validated_data)
        return Response(DefinitionOutputSerializer(definition).data, status=status.HTTP_201_CREATED)


class DefinitionDetailApi(AccountAdminOrReadOnlyApi):
    """`GET`, `PATCH`/`PUT` (label, description, kind, choices), `DELETE` one definition (writes: administrators).
    Deleting keeps the values stored under the key; a write of `null` removes such a value."""

    def _definition(self, definition_id: int) -> CustomAttributeDefinition:
        return access_attribute_definition(account_id=self.account_id, definition_id=definition_id)

    @extend_schema(responses=DefinitionOutputSerializer)
    def get(self, request: Request, account_id: int, definition_id: int) -> Response:
        return Response(DefinitionOutputSerializer(self._definition(definition_id)).data)

    def _update(self, request: Request, definition_id: int) -> Response:
        definition = self._definition(definition_id)
        data = DefinitionUpdateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        with service_errors_as_400():
            definition = attribute_definition_update(definition=definition, **data.validated_data)
        return Response(DefinitionOutputSerializer(definition).data)

    @extend_schema(request=DefinitionUpdateSerializer, responses=DefinitionOutputSerializer)
    def patch(self, request: Request, account_id: int, definition_id: int) -> Response:
        return self._update(request, definition_id)

    @extend_schema(request=DefinitionUpdateSerializer, responses=DefinitionOutputSerializer)
    def put(self, request: Request, account_id: int, definition_id: int) -> Response:
        return self._update(request, definition_id)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, account_id: int, definition_id: int) -> Response:
        attribute_definition_delete(definition=self._definition(definition_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


# ---- values ------------------------------------------------------------------------------------------------


@extend_schema_field(
    {"type": "object", "maxProperties": MAX_KEYS_PER_WRITE, "additionalProperties": {"nullable": True}}
)
class AttributeValuesField(serializers.DictField):
    """`{key: value}`, documented with the number of keys `validate_custom_attributes` allows."""


class CustomAttributesSerializer(serializers.Serializer):
    """The stored values (any number of keys: each write adds up to MAX_KEYS_PER_WRITE)."""

    custom_attributes = serializers.DictField(child=serializers.JSONField())

    class Meta:
        ref_name = "CustomAttributes"


class CustomAttributesInputSerializer(serializers.Serializer):
    custom_attributes = AttributeValuesField(
        child=serializers.JSONField(allow_null=True),
        # Optional: a PATCH of `{}` is a partial update with nothing to change (200, the current values).
        required=False,
        help_text="Key -> value of the key's kind (text, number, true/false, YYYY-MM-DD, one of the list); "
        f"null removes the key. At most {MAX_KEYS_PER_WRITE} keys.",
    )

    class Meta:
        ref_name = "CustomAttributesInput"

    def validate_custom_attributes(self, value: dict) -> dict:
        if len(value) > MAX_KEYS_PER_WRITE:
            raise serializers.ValidationError(f"At most {MAX_KEYS_PER_WRITE} keys per request.")
        return value


def _values_response(target: AttributeOwner) -> Response:
    return Response({"custom_attributes": target.custom_attributes or {}})


def _values_write(request: Request, target: AttributeOwner) -> Response:
    data = CustomAttributesInputSerializer(data=request.data)
    data.is_valid(raise_exception=True)
    changes = data.validated_data.get("custom_attributes")
    if changes:
        with service_errors_as_400("custom_attributes"):
            custom_attributes_update(target=target, changes=changes)
    return _values_response(target)


class ContactAttributesApi(AccountApi):
    """`GET` / `PATCH` a contact's custom attributes (see the module docstring)."""

    @extend_schema(responses=CustomAttributesSerializer)
    def get(self, request: Request, account_id: int, contact_id: int) -> Response:
        return _values_response(access_contact(account_id=self.account_id, contact_id=contact_id))

    @extend_schema(request=CustomAttributesInputSerializer, responses=CustomAttributesSerializer)
    def patch(self, request: Request, account_id: int, contact_id: int) -> Response:
        return _values_write(request, access_contact(account_id=self.account_id, contact_id=contact_id))


class ConversationAttributesApi(AccountApi):
    """`GET` / `PATCH` a conversation's custom attributes (see the module docstring)."""

    @extend_schema(responses=CustomAttributesSerializer)
    def get(self, request: Request, account_id: int, conversation_id: int) -> Response:
        return _values_response(
            access_conversation(
                account_id=self.account_id, conversation_id=conversation_id, user=request.user
            )
        )

    @extend_schema(request=CustomAttributesInputSerializer, responses=CustomAttributesSerializer)
    def patch(self, request: Request, account_id: int, conversation_id: int) -> Response:
        conversation = access_conversation(
            account_id=self.account_id, conversation_id=conversation_id, user=request.user
        )
        return _values_write(request, conversation)
