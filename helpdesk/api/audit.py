"""The account's audit log over the REST API (administrators only; agents 403, another account 404).

- `accounts/<id>/audit-log/`: `GET` the entries newest first, paginated (`?limit=&offset=`), filtered by
  `model` ("helpdesk.inbox", "captain.assistant" ...), `actor` (user id), `since` and `until` (days, included).
  Each entry: who (`actor`, `actor_name`), where (`source`: admin, dashboard, api, system), what (`action`,
  `model`, `object_id`, `object_repr`), when (`created_at`) and `changes`: {field: [before, after]}; a secret's
  pair is ["changed", "changed"], never a value.
"""

from __future__ import annotations

from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

import helpdesk.ids  # noqa: F401  (registers the <id:...> path converter used below)
from helpdesk.models import AuditEntry
from helpdesk.selectors.audit import audit_entries

from .auth import AccountAdminApi, Pagination, paginated_response

ACCOUNT = "accounts/<id:account_id>/"


class AuditEntrySerializer(serializers.ModelSerializer):
    actor = serializers.IntegerField(source="actor_id", allow_null=True)
    changes = serializers.DictField(child=serializers.ListField(), help_text="{field: [before, after]}")

    class Meta:
        model = AuditEntry
        ref_name = "AuditEntry"
        fields = [
            "id",
            "created_at",
            "actor",
            "actor_name",
            "source",
            "action",
            "model",
            "object_id",
            "object_repr",
            "changes",
        ]
        read_only_fields = fields


class AuditQuerySerializer(serializers.Serializer):
    model = serializers.CharField(required=False, max_length=100)
    actor = serializers.IntegerField(required=False, min_value=1, max_value=2**31 - 1)
    since = serializers.DateField(required=False)
    until = serializers.DateField(required=False)


class AuditLogApi(AccountAdminApi):
    # Lets the schema say the answer is a page ({count, next, previous, results}) with limit/offset.
    pagination_class = Pagination

    @extend_schema(
        parameters=[AuditQuerySerializer],
        responses=AuditEntrySerializer(many=True),
    )
    def get(self, request: Request, account_id: int) -> Response:
        query = AuditQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        values = query.validated_data
        entries = audit_entries(
            account_id=self.account_id,
            model=values.get("model", ""),
            actor_id=values.get("actor"),
            since=values.get("since"),
            until=values.get("until"),
        )
        return paginated_response(
            request=request, view=self, queryset=entries, serializer_class=AuditEntrySerializer
        )


urlpatterns = [path(f"{ACCOUNT}audit-log/", AuditLogApi.as_view(), name="audit-log")]
