"""FAQ entries of an assistant: `accounts/<id>/assistants/<aid>/faq/[<fid>/]` (writes: administrators)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from helpdesk.api.auth import AccountAdminOrReadOnlyApi, Pagination, paginated_response

from ..models import FaqEntry
from ..selectors import access_assistant, access_faq_entry, faq_entry_list
from ..services.faq import FAQ_ENTRY_FIELDS, faq_entry_create, faq_entry_delete, faq_entry_update


class FaqEntryOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = FaqEntry
        ref_name = "FaqEntry"
        fields = ["id", *FAQ_ENTRY_FIELDS, "created_at"]
        read_only_fields = fields


class FaqEntryInputSerializer(serializers.Serializer):
    question = serializers.CharField(max_length=2000)
    answer = serializers.CharField(max_length=10_000)
    enabled = serializers.BooleanField(default=True)

    class Meta:
        ref_name = "FaqEntryInput"


class FaqEntryCollectionApi(AccountAdminOrReadOnlyApi):
    """`GET` an assistant's FAQ entries / `POST` a new one (administrators)."""

    pagination_class = Pagination
    InputSerializer = FaqEntryInputSerializer
    OutputSerializer = FaqEntryOutputSerializer

    @extend_schema(responses=OutputSerializer(many=True))
    def get(self, request: Request, account_id: int, assistant_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        return paginated_response(
            request=request,
            view=self,
            queryset=faq_entry_list(assistant=assistant),
            serializer_class=self.OutputSerializer,
        )

    @extend_schema(request=InputSerializer, responses={201: OutputSerializer})
    def post(self, request: Request, account_id: int, assistant_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        entry = faq_entry_create(assistant=assistant, **data.validated_data)
        return Response(self.OutputSerializer(entry).data, status=status.HTTP_201_CREATED)


class FaqEntryDetailApi(AccountAdminOrReadOnlyApi):
    """`GET`, `PUT`/`PATCH`, `DELETE` one FAQ entry (writes: administrators)."""

    InputSerializer = FaqEntryInputSerializer
    OutputSerializer = FaqEntryOutputSerializer

    def _entry(self, assistant_id: int, faq_entry_id: int) -> FaqEntry:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        return access_faq_entry(assistant=assistant, faq_entry_id=faq_entry_id)

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request, account_id: int, assistant_id: int, faq_entry_id: int) -> Response:
        return Response(self.OutputSerializer(self._entry(assistant_id, faq_entry_id)).data)

    def _update(self, request: Request, assistant_id: int, faq_entry_id: int, *, partial: bool) -> Response:
        entry = self._entry(assistant_id, faq_entry_id)
        data = self.InputSerializer(entry, data=request.data, partial=partial)
        data.is_valid(raise_exception=True)
        entry = faq_entry_update(entry=entry, **data.validated_data)
        return Response(self.OutputSerializer(entry).data)

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def put(self, request: Request, account_id: int, assistant_id: int, faq_entry_id: int) -> Response:
        return self._update(request, assistant_id, faq_entry_id, partial=False)

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def patch(self, request: Request, account_id: int, assistant_id: int, faq_entry_id: int) -> Response:
        return self._update(request, assistant_id, faq_entry_id, partial=True)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, account_id: int, assistant_id: int, faq_entry_id: int) -> Response:
        faq_entry_delete(entry=self._entry(assistant_id, faq_entry_id))
        return Response(status=status.HTTP_204_NO_CONTENT)
