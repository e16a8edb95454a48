"""Satisfaction ratings: `GET accounts/<id>/csat-responses/`, the customers' answers to the rating request sent
after resolution (helpdesk.services.csat). Read-only: a rating is the customer's, given in their channel."""

from __future__ import annotations

from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from helpdesk.ids import IdFilterField  # also registers the <id:...> path converter used below
from helpdesk.models import CsatResponse
from helpdesk.selectors.csat import csat_responses

from .auth import AccountApi, Pagination, paginated_response


class CsatResponseOutputSerializer(serializers.ModelSerializer):
    inbox = serializers.IntegerField(source="conversation.inbox_id")
    contact = serializers.IntegerField(source="conversation.contact_id")

    class Meta:
        model = CsatResponse
        ref_name = "CsatResponse"
        fields = ["id", "conversation", "inbox", "contact", "rating", "comment", "created_at", "updated_at"]
        read_only_fields = fields


class CsatResponseListApi(AccountApi):
    """`GET accounts/<id>/csat-responses/?inbox=&conversation=&since=&until=`: the account's ratings, newest
    first (`since` inclusive, `until` exclusive, ISO 8601 date-times), paginated with `?limit=&offset=`."""

    pagination_class = Pagination

    class FilterSerializer(serializers.Serializer):
        inbox = IdFilterField()
        conversation = IdFilterField()
        since = serializers.DateTimeField(required=False)
        until = serializers.DateTimeField(required=False)

        class Meta:
            ref_name = "CsatResponseListFilter"

    @extend_schema(parameters=[FilterSerializer], responses=CsatResponseOutputSerializer(many=True))
    def get(self, request: Request, account_id: int) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        data = filters.validated_data
        responses = csat_responses(
            account_id=self.account_id,
            user=request.user,
            inbox_id=data.get("inbox"),
            conversation_id=data.get("conversation"),
            since=data.get("since"),
            until=data.get("until"),
        )
        return paginated_response(
            request=request, view=self, queryset=responses, serializer_class=CsatResponseOutputSerializer
        )


urlpatterns = [
    path(
        "accounts/<id:account_id>/csat-responses/", CsatResponseListApi.as_view(), name="csat-response-list"
    ),
]
