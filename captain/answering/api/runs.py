"""The AI runs of a conversation and their spans: `GET accounts/<id>/conversations/<cid>/runs/`.

The data behind the per-turn debug log. Spans may hold prompts and model output, so only administrators of the
account may read them.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from captain.answering.models import Run, SpanRecord
from captain.answering.selectors import conversation_runs, spans_by_trace
from helpdesk.api.auth import AccountAdminApi, Pagination
from helpdesk.selectors import access_conversation


class SpanOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = SpanRecord
        ref_name = "Span"
        fields = [
            "name",
            "span_id",
            "parent_span_id",
            "start_time",
            "end_time",
            "status",
            "attributes",
            "events",
        ]
        read_only_fields = fields


class RunOutputSerializer(serializers.ModelSerializer):
    spans = SpanOutputSerializer(many=True, read_only=True, source="span_records")

    class Meta:
        model = Run
        ref_name = "Run"
        fields = [
            "id",
            "outcome",
            "detail",
            "route",
            "start_agent_key",
            "end_agent_key",
            "llm_calls",
            "input_tokens",
            "output_tokens",
            "credit_used",
            "sources",
            "trace_id",
            "duration_ms",
            "trigger_message",
            "reply_message",
            "created_at",
            "spans",
        ]
        read_only_fields = fields


class ConversationRunsApi(AccountAdminApi):
    """Runs of the conversation, newest first (paginated), each with its stored spans in start order."""

    pagination_class = Pagination

    @extend_schema(responses=RunOutputSerializer(many=True))
    def get(self, request: Request, account_id: int, conversation_id: int) -> Response:
        conversation = access_conversation(
            account_id=self.account_id, conversation_id=conversation_id, user=request.user
        )
        paginator = Pagination()
        runs = paginator.paginate_queryset(conversation_runs(conversation=conversation), request, view=self)
        spans = spans_by_trace(runs=runs)
        for run in runs:
            run.span_records = spans.get(run.trace_id, []) if run.trace_id else []
        return paginator.get_paginated_response(RunOutputSerializer(runs, many=True).data)
