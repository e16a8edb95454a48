"""Knowledge documents of an assistant: `accounts/<id>/assistants/<aid>/documents/[<did>/[resync/|chunks/]]`.

Members read; administrators upload, import, re-sync and delete. A document is processed by a worker after it is
created: its `status` (queued / processing / ready / failed), `progress` and `status_reason` say how far it got.
An upload's body is read through `CappedUploadHandler`, so an oversized file is counted, not kept: the document
is created failed saying how large it was.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from captain.api.errors import service_errors_as_400
from captain.assistants.selectors import access_assistant
from captain.knowledge.models import KnowledgeChunk, KnowledgeDocument
from captain.knowledge.selectors import access_document, document_chunks, document_list
from captain.knowledge.services.knowledge import (
    URL_KINDS,
    document_create_upload,
    document_create_url,
    document_delete,
    document_resync,
)
from captain.knowledge.upload_limits import cap_uploads
from helpdesk.api.auth import AccountAdminOrReadOnlyApi, Pagination, paginated_response
from helpdesk.api.parsers import BoundedJSONParser
from helpdesk.api.schema import REFUSES_400

DOCUMENT_FIELDS = [
    "id",
    "kind",
    "title",
    "source_url",
    "file_name",
    "content_type",
    "size_bytes",
    "status",
    "status_reason",
    "progress",
    "pages",
    "chunk_count",
    "max_pages",
    "max_depth",
    "sync_interval_hours",
    "synced_at",
    "created_at",
    "updated_at",
]


class DocumentOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = KnowledgeDocument
        ref_name = "KnowledgeDocument"
        fields = DOCUMENT_FIELDS
        read_only_fields = fields


class DocumentUrlInputSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=list(URL_KINDS))
    url = serializers.CharField(max_length=2000, trim_whitespace=True)
    max_pages = serializers.IntegerField(required=False, allow_null=True)
    max_depth = serializers.IntegerField(required=False, allow_null=True)
    sync_interval_hours = serializers.IntegerField(required=False, default=0)

    class Meta:
        ref_name = "KnowledgeDocumentUrlInput"


class DocumentUploadInputSerializer(serializers.Serializer):
    """For the schema: the upload is read from `request.FILES` (an empty file is accepted and fails with a
    reason, like every other bad file)."""

    file = serializers.FileField(allow_empty_file=True, use_url=False)

    class Meta:
        ref_name = "KnowledgeDocumentUploadInput"


class ChunkOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = KnowledgeChunk
        ref_name = "KnowledgeChunk"
        fields = ["ordinal", "heading", "text", "url"]
        read_only_fields = fields


class _DocumentApi(AccountAdminOrReadOnlyApi):
    def initialize_request(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Request:
        # Before authentication: the CSRF check of a session-authenticated POST reads the body.
        cap_uploads(request)
        return super().initialize_request(request, *args, **kwargs)

    def _document(self, assistant_id: int, document_id: int) -> KnowledgeDocument:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        return access_document(assistant=assistant, document_id=document_id)


class DocumentCollectionApi(_DocumentApi):
    """`GET` an assistant's documents / `POST` a file (multipart `file`) or a URL import (JSON)."""

    # The one operation that takes a file: multipart (a flat body: `file`, or a URL import's fields) next to JSON.
    parser_classes = [BoundedJSONParser, MultiPartParser]
    pagination_class = Pagination
    OutputSerializer = DocumentOutputSerializer

    @extend_schema(responses=OutputSerializer(many=True))
    def get(self, request: Request, account_id: int, assistant_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        return paginated_response(
            request=request,
            view=self,
            queryset=document_list(assistant=assistant),
            serializer_class=self.OutputSerializer,
        )

    @extend_schema(
        request={
            "multipart/form-data": DocumentUploadInputSerializer,
            "application/json": DocumentUrlInputSerializer,
        },
        responses={201: OutputSerializer},
    )
    def post(self, request: Request, account_id: int, assistant_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        upload = request.FILES.get("file") if hasattr(request, "FILES") else None
        with service_errors_as_400():
            if upload is not None:
                document = document_create_upload(
                    assistant=assistant,
                    file_name=upload.name or "",
                    content_type=upload.content_type or "",
                    data=upload,
                    size=upload.size,
                )
            else:
                data = DocumentUrlInputSerializer(data=request.data)
                data.is_valid(raise_exception=True)
                document = document_create_url(assistant=assistant, **data.validated_data)
        return Response(self.OutputSerializer(document).data, status=status.HTTP_201_CREATED)


class DocumentDetailApi(_DocumentApi):
    """`GET` one document / `DELETE` it with its chunks (administrators)."""

    OutputSerializer = DocumentOutputSerializer

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request, account_id: int, assistant_id: int, document_id: int) -> Response:
        return Response(self.OutputSerializer(self._document(assistant_id, document_id)).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, account_id: int, assistant_id: int, document_id: int) -> Response:
        document_delete(document=self._document(assistant_id, document_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class DocumentResyncApi(_DocumentApi):
    """`POST`: process the document again (an upload from its stored bytes, a URL fetched again)."""

    OutputSerializer = DocumentOutputSerializer

    @extend_schema(request=None, responses={202: OutputSerializer, **REFUSES_400})
    def post(self, request: Request, account_id: int, assistant_id: int, document_id: int) -> Response:
        with service_errors_as_400():
            document = document_resync(document=self._document(assistant_id, document_id))
        return Response(self.OutputSerializer(document).data, status=status.HTTP_202_ACCEPTED)


class DocumentChunksApi(_DocumentApi):
    """`GET` the passages a document was cut into (read only)."""

    pagination_class = Pagination
    OutputSerializer = ChunkOutputSerializer

    @extend_schema(responses=OutputSerializer(many=True))
    def get(self, request: Request, account_id: int, assistant_id: int, document_id: int) -> Response:
        return paginated_response(
            request=request,
            view=self,
            queryset=document_chunks(document=self._document(assistant_id, document_id)),
            serializer_class=self.OutputSerializer,
        )
