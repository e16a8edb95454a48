"""Assistants: `accounts/<id>/assistants/` (list, create) and `.../assistants/<aid>/` (read, update, delete).

Members of the account may read; only its administrators may write. `inbox_ids` connects inboxes of the same
account (an inbox is served by at most one assistant).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from captain.api.errors import service_errors_as_400
from captain.assistants.models import Assistant
from captain.assistants.selectors import access_assistant, assistant_list
from captain.assistants.services.assistants import (
    ASSISTANT_FIELDS,
    assistant_create,
    assistant_delete,
    assistant_update,
)
from captain.assistants.services.builder import MAX_INSTRUCTION_CHARS
from helpdesk.api.auth import AccountAdminOrReadOnlyApi, Pagination, paginated_response
from helpdesk.models import Inbox


class AssistantOutputSerializer(serializers.ModelSerializer):
    inbox_ids = serializers.SerializerMethodField()

    class Meta:
        model = Assistant
        ref_name = "Assistant"
        fields = ["id", *ASSISTANT_FIELDS, "inbox_ids", "created_at"]
        read_only_fields = fields

    def get_inbox_ids(self, assistant: Assistant) -> list[int]:
        return sorted(link.inbox_id for link in assistant.assistant_inboxes.all())


class AssistantInputSerializer(serializers.ModelSerializer):
    """The shape of a write (types, lengths, inboxes of this account); the rules are the service's
    (`captain.assistants.services.assistants`: template sandbox, max-turns cap, endpoint/model, one assistant per inbox)."""

    instructions = serializers.CharField(max_length=MAX_INSTRUCTION_CHARS, allow_blank=True, required=False)
    response_guidelines = serializers.ListField(
        child=serializers.CharField(max_length=500), max_length=50, required=False
    )
    guardrails = serializers.ListField(
        child=serializers.CharField(max_length=500), max_length=50, required=False
    )
    temperature = serializers.FloatField(min_value=0.0, max_value=2.0, required=False)
    max_turns = serializers.IntegerField(min_value=1, required=False)
    inbox_ids = serializers.PrimaryKeyRelatedField(many=True, queryset=Inbox.objects.none(), required=False)

    class Meta:
        model = Assistant
        ref_name = "AssistantInput"
        fields = [*ASSISTANT_FIELDS, "inbox_ids"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Scoped per request: another tenant's inbox id is "does not exist", never linkable. Without an
        # account in the context (schema generation) no inbox qualifies.
        if "account_id" in self.context:
            self.fields["inbox_ids"].child_relation.queryset = Inbox.objects.filter(
                account_id=self.context["account_id"]
            )

    def service_arguments(self) -> dict:
        """validated_data as the service's keyword arguments (inboxes by id, each once)."""
        data = dict(self.validated_data)
        if "inbox_ids" in data:
            data["inbox_ids"] = list(dict.fromkeys(inbox.id for inbox in data["inbox_ids"]))
        return data


class AssistantCollectionApi(AccountAdminOrReadOnlyApi):
    """`GET` the account's assistants / `POST` a new one (administrators)."""

    pagination_class = Pagination
    InputSerializer = AssistantInputSerializer
    OutputSerializer = AssistantOutputSerializer

    @extend_schema(responses=OutputSerializer(many=True))
    def get(self, request: Request, account_id: int) -> Response:
        return paginated_response(
            request=request,
            view=self,
            queryset=assistant_list(account_id=self.account_id),
            serializer_class=self.OutputSerializer,
        )

    @extend_schema(request=InputSerializer, responses={201: OutputSerializer})
    def post(self, request: Request, account_id: int) -> Response:
        data = self.InputSerializer(data=request.data, context=self.serializer_context())
        data.is_valid(raise_exception=True)
        with service_errors_as_400():
            assistant = assistant_create(account_id=self.account_id, **data.service_arguments())
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant.id)
        return Response(self.OutputSerializer(assistant).data, status=status.HTTP_201_CREATED)


class AssistantDetailApi(AccountAdminOrReadOnlyApi):
    """`GET`, `PUT`/`PATCH` (administrators), `DELETE` (administrators) one assistant."""

    InputSerializer = AssistantInputSerializer
    OutputSerializer = AssistantOutputSerializer

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request, account_id: int, assistant_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        return Response(self.OutputSerializer(assistant).data)

    def _update(self, request: Request, assistant_id: int, *, partial: bool) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        data = self.InputSerializer(
            assistant, data=request.data, partial=partial, context=self.serializer_context()
        )
        data.is_valid(raise_exception=True)
        with service_errors_as_400():
            assistant_update(assistant=assistant, **data.service_arguments())
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        return Response(self.OutputSerializer(assistant).data)

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def put(self, request: Request, account_id: int, assistant_id: int) -> Response:
        return self._update(request, assistant_id, partial=False)

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def patch(self, request: Request, account_id: int, assistant_id: int) -> Response:
        return self._update(request, assistant_id, partial=True)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, account_id: int, assistant_id: int) -> Response:
        assistant_delete(assistant=access_assistant(account_id=self.account_id, assistant_id=assistant_id))
        return Response(status=status.HTTP_204_NO_CONTENT)
