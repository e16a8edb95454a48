"""Memory over the REST API.

- `accounts/<id>/assistants/<aid>/memory-variables/[<vid>/]`: an assistant's declared variables; members read,
  administrators declare, change and delete them (captain.memory.services.memory_variables).
- `accounts/<id>/conversations/<cid>/memory/`: the values the assistant answering the conversation's inbox sees,
  each with where it comes from (`GET`); `PUT`/`PATCH {name: value}` sets the given names (`null` clears one),
  `DELETE .../memory/<name>/` clears one. Any member may write, as the API writer: a variable whose declaration
  does not allow the API is refused, like an undeclared name or a value not of its kind (400 naming it), and one
  refusal stores nothing of the request.

Another account's assistant, variable or conversation answers 404, like a missing one.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from captain.answering.services.runs import assistant_for_inbox
from captain.api.errors import service_errors_as_400
from captain.assistants.models import Assistant
from captain.assistants.selectors import access_assistant
from captain.memory.models import MEMORY_NAME_RE, MemoryValue, MemoryVariable
from captain.memory.services.memory import MemoryWriteRefused, memory_clear, memory_state, memory_write
from captain.memory.services.memory_variables import (
    MAX_CHOICE_CHARS,
    MAX_CHOICES,
    MEMORY_VARIABLE_FIELDS,
    memory_variable_create,
    memory_variable_delete,
    memory_variable_update,
)
from helpdesk.api.auth import AccountAdminOrReadOnlyApi, AccountApi
from helpdesk.api.schema import REFUSES_400, pattern_field
from helpdesk.models import Conversation
from helpdesk.selectors import access_conversation

MAX_NAMES_PER_WRITE = 100


# ---- declarations ------------------------------------------------------------------------------------------


class MemoryVariableOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = MemoryVariable
        ref_name = "MemoryVariable"
        fields = ["id", *MEMORY_VARIABLE_FIELDS, "created_at"]
        read_only_fields = fields


class MemoryVariableInputSerializer(serializers.Serializer):
    """The shape of a write; the rules (name format and uniqueness, choices, a default of the kind) are the
    service's."""

    name = pattern_field(
        MEMORY_NAME_RE.pattern,
        "Lowercase letters, digits and _, starting with a letter (at most 64).",
        max_length=64,
    )
    description = serializers.CharField(max_length=500)
    kind = serializers.ChoiceField(choices=MemoryVariable.Kind.choices, default=MemoryVariable.Kind.TEXT)
    choices = serializers.ListField(
        child=serializers.CharField(max_length=MAX_CHOICE_CHARS), max_length=MAX_CHOICES, default=list
    )
    default = serializers.CharField(max_length=500, allow_blank=True, default="")
    scope = serializers.ChoiceField(
        choices=MemoryVariable.Scope.choices, default=MemoryVariable.Scope.CONTACT
    )
    writable_by_ai = serializers.BooleanField(default=True)
    writable_by_agents = serializers.BooleanField(default=True)
    writable_by_api = serializers.BooleanField(default=True)

    class Meta:
        ref_name = "MemoryVariableInput"


class MemoryVariableCollectionApi(AccountAdminOrReadOnlyApi):
    """`GET` an assistant's memory variables / `POST` a new one (administrators)."""

    @extend_schema(responses=MemoryVariableOutputSerializer(many=True))
    def get(self, request: Request, account_id: int, assistant_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        variables = assistant.memory_variables.order_by("id")
        return Response(MemoryVariableOutputSerializer(variables, many=True).data)

    @extend_schema(request=MemoryVariableInputSerializer, responses={201: MemoryVariableOutputSerializer})
    def post(self, request: Request, account_id: int, assistant_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        data = MemoryVariableInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        with service_errors_as_400():
            variable = memory_variable_create(assistant=assistant, **data.validated_data)
        return Response(MemoryVariableOutputSerializer(variable).data, status=status.HTTP_201_CREATED)


class MemoryVariableDetailApi(AccountAdminOrReadOnlyApi):
    """`GET`, `PUT`/`PATCH`, `DELETE` one memory variable (writes: administrators). Deleting it deletes its
    stored values."""

    def _variable(self, assistant_id: int, variable_id: int) -> MemoryVariable:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        variable = assistant.memory_variables.filter(pk=variable_id).first()
        if variable is None:
            raise Http404("No such memory variable.")
        return variable

    @extend_schema(responses=MemoryVariableOutputSerializer)
    def get(self, request: Request, account_id: int, assistant_id: int, variable_id: int) -> Response:
        return Response(MemoryVariableOutputSerializer(self._variable(assistant_id, variable_id)).data)

    def _update(self, request: Request, assistant_id: int, variable_id: int, *, partial: bool) -> Response:
        variable = self._variable(assistant_id, variable_id)
        data = MemoryVariableInputSerializer(data=request.data, partial=partial)
        data.is_valid(raise_exception=True)
        with service_errors_as_400():
            variable = memory_variable_update(variable=variable, **data.validated_data)
        return Response(MemoryVariableOutputSerializer(variable).data)

    @extend_schema(request=MemoryVariableInputSerializer, responses=MemoryVariableOutputSerializer)
    def put(self, request: Request, account_id: int, assistant_id: int, variable_id: int) -> Response:
        return self._update(request, assistant_id, variable_id, partial=False)

    @extend_schema(request=MemoryVariableInputSerializer, responses=MemoryVariableOutputSerializer)
    def patch(self, request: Request, account_id: int, assistant_id: int, variable_id: int) -> Response:
        return self._update(request, assistant_id, variable_id, partial=True)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, account_id: int, assistant_id: int, variable_id: int) -> Response:
        memory_variable_delete(variable=self._variable(assistant_id, variable_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


# ---- values of a conversation ------------------------------------------------------------------------------


class MemoryEntrySerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    kind = serializers.ChoiceField(choices=MemoryVariable.Kind.choices)
    scope = serializers.ChoiceField(choices=MemoryVariable.Scope.choices)
    choices = serializers.ListField(child=serializers.CharField())
    value = serializers.JSONField(allow_null=True)
    source = serializers.ChoiceField(
        choices=["stored", "default", "unset", "request"],
        help_text="stored: written by the AI, an agent or the API; default: the declaration's default.",
    )
    writable_by_ai = serializers.BooleanField()
    writable_by_agents = serializers.BooleanField()
    writable_by_api = serializers.BooleanField()
    written_by = serializers.CharField(help_text="ai, agent or api for a stored value; '' otherwise.")
    updated_at = serializers.DateTimeField(allow_null=True)

    class Meta:
        ref_name = "MemoryEntry"


class ConversationMemoryOutputSerializer(serializers.Serializer):
    assistant = serializers.IntegerField()
    memory = MemoryEntrySerializer(many=True)

    class Meta:
        ref_name = "ConversationMemory"


MEMORY_WRITE_BODY = {
    "application/json": {
        "type": "object",
        "description": "`{name: value}`: each name a declared variable, each value of its kind; null clears the "
        f"name. At most {MAX_NAMES_PER_WRITE} names; `{{}}` changes nothing.",
        "maxProperties": MAX_NAMES_PER_WRITE,
        "additionalProperties": {"nullable": True},
    }
}


def _conversation_assistant(
    account_id: int, conversation_id: int, user: Any
) -> tuple[Conversation, Assistant]:
    conversation = access_conversation(account_id=account_id, conversation_id=conversation_id, user=user)
    assistant = assistant_for_inbox(conversation.inbox_id)
    if assistant is None or assistant.account_id != conversation.account_id:
        raise Http404("No assistant answers this conversation's inbox.")
    return conversation, assistant


def _memory_response(conversation: Conversation, assistant: Assistant) -> Response:
    entries = memory_state(assistant=assistant, conversation=conversation)
    return Response(ConversationMemoryOutputSerializer({"assistant": assistant.pk, "memory": entries}).data)


class ConversationMemoryApi(AccountApi):
    """`GET` the memory of a conversation / `PUT`, `PATCH` `{name: value}` (see the module docstring)."""

    @extend_schema(responses=ConversationMemoryOutputSerializer)
    def get(self, request: Request, account_id: int, conversation_id: int) -> Response:
        return _memory_response(*_conversation_assistant(self.account_id, conversation_id, request.user))

    def _write(self, request: Request, conversation_id: int) -> Response:
        conversation, assistant = _conversation_assistant(self.account_id, conversation_id, request.user)
        changes = request.data
        if not isinstance(changes, dict):
            raise serializers.ValidationError({"non_field_errors": ["Send an object of {name: value}."]})
        if not changes:  # nothing to set: the current memory, as for any partial update without changes
            return _memory_response(conversation, assistant)
        if len(changes) > MAX_NAMES_PER_WRITE:
            raise serializers.ValidationError(
                {"non_field_errors": [f"At most {MAX_NAMES_PER_WRITE} names per request."]}
            )
        errors: dict[str, list[str]] = {}
        with transaction.atomic():
            for name, value in changes.items():
                try:
                    if value is None:
                        memory_clear(
                            assistant=assistant,
                            conversation=conversation,
                            name=name,
                            writer=MemoryValue.Writer.API,
                        )
                    else:
                        memory_write(
                            assistant=assistant,
                            conversation=conversation,
                            name=name,
                            value=value,
                            writer=MemoryValue.Writer.API,
                        )
                except MemoryWriteRefused as exc:
                    errors[str(name)[:64]] = [str(exc)]
            if errors:
                # Raised inside the transaction: the names written before the refusal are rolled back too.
                raise serializers.ValidationError(errors)
        return _memory_response(conversation, assistant)

    @extend_schema(request=MEMORY_WRITE_BODY, responses=ConversationMemoryOutputSerializer)
    def put(self, request: Request, account_id: int, conversation_id: int) -> Response:
        return self._write(request, conversation_id)

    @extend_schema(request=MEMORY_WRITE_BODY, responses=ConversationMemoryOutputSerializer)
    def patch(self, request: Request, account_id: int, conversation_id: int) -> Response:
        return self._write(request, conversation_id)


class ConversationMemoryNameApi(AccountApi):
    """`DELETE .../memory/<name>/`: clear a stored value (the declaration's default applies again)."""

    @extend_schema(responses={204: None, **REFUSES_400})
    def delete(self, request: Request, account_id: int, conversation_id: int, name: str) -> Response:
        conversation, assistant = _conversation_assistant(self.account_id, conversation_id, request.user)
        try:
            memory_clear(
                assistant=assistant, conversation=conversation, name=name, writer=MemoryValue.Writer.API
            )
        except MemoryWriteRefused as exc:
            raise serializers.ValidationError({"name": [str(exc)]}) from exc
        return Response(status=status.HTTP_204_NO_CONTENT)
