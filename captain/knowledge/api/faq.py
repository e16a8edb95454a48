"""FAQ entries of an assistant: `accounts/<id>/assistants/<aid>/faq/[<fid>/]` (writes: administrators), their
review (approve, edit-and-approve, reject, one by one or in bulk) and the requests to draft entries from a document
or a resolved conversation. Entries created here are approved; drafts the model writes wait as pending."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from captain.api.errors import service_errors_as_400
from captain.assistants.selectors import access_assistant
from captain.knowledge.models import FaqEntry, KnowledgeDocument
from captain.knowledge.selectors import access_document, access_faq_entry, faq_entry_list
from captain.knowledge.services.faq import (
    FAQ_ENTRY_FIELDS,
    REVIEW_ACTIONS,
    faq_entries_review,
    faq_entry_approve,
    faq_entry_create,
    faq_entry_delete,
    faq_entry_reject,
    faq_entry_update,
)
from captain.knowledge.services.faq_drafts import (
    faq_draft_conversation_problem,
    faq_drafts_conversation_enqueue,
    faq_drafts_document_enqueue,
)
from helpdesk.api.auth import AccountAdminApi, AccountAdminOrReadOnlyApi, Pagination, paginated_response
from helpdesk.api.schema import REFUSES_400
from helpdesk.ids import IdFilterField
from helpdesk.selectors import access_conversation

REVIEW_FIELDS = ["status", "source", "source_document", "source_conversation", "reviewed_at", "updated_at"]


class FaqEntryOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = FaqEntry
        ref_name = "FaqEntry"
        fields = ["id", *FAQ_ENTRY_FIELDS, *REVIEW_FIELDS, "created_at"]
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

    @extend_schema(
        parameters=[OpenApiParameter("status", str, enum=list(FaqEntry.Status.values), required=False)],
        responses=OutputSerializer(many=True),
    )
    def get(self, request: Request, account_id: int, assistant_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        entries: QuerySet[FaqEntry] = faq_entry_list(assistant=assistant)
        wanted = request.query_params.get("status")
        if wanted is not None:
            if wanted not in FaqEntry.Status.values:
                raise serializers.ValidationError(
                    {
                        "status": [
                            f"Unknown status {wanted!r}: use one of {', '.join(FaqEntry.Status.values)}."
                        ]
                    }
                )
            entries = entries.filter(status=wanted)
        return paginated_response(
            request=request, view=self, queryset=entries, serializer_class=self.OutputSerializer
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


class FaqApproveInputSerializer(serializers.Serializer):
    question = serializers.CharField(max_length=2000, required=False)
    answer = serializers.CharField(max_length=10_000, required=False)

    class Meta:
        ref_name = "FaqApproveInput"


class FaqEntryApproveApi(AccountAdminApi):
    """`POST` approve one entry, with an edited question and/or answer in the body when given."""

    InputSerializer = FaqApproveInputSerializer
    OutputSerializer = FaqEntryOutputSerializer

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def post(self, request: Request, account_id: int, assistant_id: int, faq_entry_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        entry = access_faq_entry(assistant=assistant, faq_entry_id=faq_entry_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        with service_errors_as_400():
            entry = faq_entry_approve(entry=entry, **data.validated_data)
        return Response(self.OutputSerializer(entry).data)


class FaqEntryRejectApi(AccountAdminApi):
    """`POST` reject one entry (kept, never retrieved, and not drafted again)."""

    OutputSerializer = FaqEntryOutputSerializer

    @extend_schema(request=None, responses=OutputSerializer)
    def post(self, request: Request, account_id: int, assistant_id: int, faq_entry_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        entry = faq_entry_reject(entry=access_faq_entry(assistant=assistant, faq_entry_id=faq_entry_id))
        return Response(self.OutputSerializer(entry).data)


class FaqReviewInputSerializer(serializers.Serializer):
    ids = serializers.ListField(child=IdFilterField(), allow_empty=False, max_length=1000)
    action = serializers.CharField()

    class Meta:
        ref_name = "FaqReviewInput"

    def validate_action(self, value: str) -> str:
        if value not in REVIEW_ACTIONS:
            raise serializers.ValidationError(
                f"Unknown action {value!r}: use one of {', '.join(REVIEW_ACTIONS)}."
            )
        return value


class FaqReviewOutputSerializer(serializers.Serializer):
    changed = serializers.IntegerField(help_text="Entries whose status changed (unknown ids are ignored).")

    class Meta:
        ref_name = "FaqReviewOutput"


class FaqReviewApi(AccountAdminApi):
    """`POST {ids, action}`: approve or reject many entries of the assistant at once."""

    InputSerializer = FaqReviewInputSerializer

    @extend_schema(request=InputSerializer, responses=FaqReviewOutputSerializer)
    def post(self, request: Request, account_id: int, assistant_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        changed = faq_entries_review(
            assistant=assistant, ids=data.validated_data["ids"], action=data.validated_data["action"]
        )
        return Response({"changed": changed})


class FaqDraftsQueuedSerializer(serializers.Serializer):
    queued = serializers.BooleanField()

    class Meta:
        ref_name = "FaqDraftsQueued"


class DocumentFaqDraftsApi(AccountAdminApi):
    """`POST`: queue drafting FAQ entries from a ready document of the assistant (202; they arrive pending)."""

    @extend_schema(request=None, responses={202: FaqDraftsQueuedSerializer, **REFUSES_400})
    def post(self, request: Request, account_id: int, assistant_id: int, document_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        document = access_document(assistant=assistant, document_id=document_id)
        if document.status != KnowledgeDocument.Status.READY:
            raise serializers.ValidationError(
                {
                    "document": [
                        f"The document is {document.status}: FAQ drafts are written from ready documents."
                    ]
                }
            )
        faq_drafts_document_enqueue(document_id=document.pk)
        return Response({"queued": True}, status=status.HTTP_202_ACCEPTED)


class ConversationFaqDraftsApi(AccountAdminApi):
    """`POST`: queue drafting an FAQ entry from a resolved conversation a person answered (202), for the
    assistant serving its inbox; 400 with the reason when there is nothing to draft from."""

    @extend_schema(request=None, responses={202: FaqDraftsQueuedSerializer, **REFUSES_400})
    def post(self, request: Request, account_id: int, conversation_id: int) -> Response:
        conversation = access_conversation(
            account_id=self.account_id, conversation_id=conversation_id, user=request.user
        )
        problem = faq_draft_conversation_problem(conversation=conversation)
        if problem:
            raise serializers.ValidationError({"conversation": [problem]})
        faq_drafts_conversation_enqueue(conversation_id=conversation.pk)
        return Response({"queued": True}, status=status.HTTP_202_ACCEPTED)
