"""Canned responses over the REST API: `accounts/<id>/canned-responses/[<cid>/]`.

Members (agents too) read, create and change them, `?q=` searches short codes and contents like the composer's `/`
picker; administrators delete. Another account's canned response answers 404, like a missing one.
"""

from __future__ import annotations

from typing import Any

from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

import helpdesk.ids  # noqa: F401  (registers the <id:...> path converter used below)
from helpdesk.models import CannedResponse
from helpdesk.selectors.canned import access_canned_response, canned_matching
from helpdesk.services.canned import (
    MAX_CONTENT_CHARS,
    canned_response_create,
    canned_response_delete,
    canned_response_update,
)

from .attributes import service_errors_as_400
from .auth import AccountApi, IsAccountAdmin, Pagination, paginated_response

# The documented pattern spells out every letter and digit it allows (helpdesk.api.schema.ecma_pattern).
SHORT_CODE_HELP = "Letters and digits of any script, `_` and `-` (stored lower case): typed after `/`."


class CannedOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = CannedResponse
        ref_name = "CannedResponse"
        fields = ["id", "short_code", "content", "created_at"]
        read_only_fields = fields
        extra_kwargs = {"short_code": {"help_text": SHORT_CODE_HELP}}


def short_code_field(**kwargs: bool) -> serializers.SlugField:
    """The model's rule (a Unicode slug, so the schema documents its pattern); surrounding spaces are refused, not
    trimmed, so what the documented pattern accepts is what is stored (lower case)."""
    return serializers.SlugField(
        max_length=64, allow_unicode=True, trim_whitespace=False, help_text=SHORT_CODE_HELP, **kwargs
    )


class CannedInputSerializer(serializers.Serializer):
    short_code = short_code_field()
    content = serializers.CharField(max_length=MAX_CONTENT_CHARS)

    class Meta:
        ref_name = "CannedResponseInput"


class CannedUpdateSerializer(serializers.Serializer):
    short_code = short_code_field(required=False)
    content = serializers.CharField(max_length=MAX_CONTENT_CHARS, required=False)

    class Meta:
        ref_name = "CannedResponseUpdate"


class CannedFilterSerializer(serializers.Serializer):
    q = serializers.CharField(max_length=64, required=False, allow_blank=True)

    class Meta:
        ref_name = "CannedResponseFilter"


class CannedCollectionApi(AccountApi):
    """`GET` the account's canned responses (`?q=` searches, `?limit=&offset=` pages) / `POST` one (any member)."""

    # Documents the page envelope and `limit`/`offset` (drf-spectacular reads it); a search is paged too, so
    # the operation has one shape.
    pagination_class = Pagination

    @extend_schema(parameters=[CannedFilterSerializer], responses=CannedOutputSerializer(many=True))
    def get(self, request: Request, account_id: int) -> Response:
        filters = CannedFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        return paginated_response(
            request=request,
            view=self,
            queryset=canned_matching(account_id=self.account_id, query=filters.validated_data.get("q", "")),
            serializer_class=CannedOutputSerializer,
        )

    @extend_schema(request=CannedInputSerializer, responses={201: CannedOutputSerializer})
    def post(self, request: Request, account_id: int) -> Response:
        data = CannedInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        with service_errors_as_400():
            canned = canned_response_create(account_id=self.account_id, **data.validated_data)
        return Response(CannedOutputSerializer(canned).data, status=status.HTTP_201_CREATED)


class CannedDetailApi(AccountApi):
    """`GET`, `PATCH`/`PUT` (any member), `DELETE` (administrators) one canned response."""

    def get_permissions(self) -> list[Any]:
        permissions = super().get_permissions()
        return [*permissions, IsAccountAdmin()] if self.request.method == "DELETE" else permissions

    def _canned(self, canned_id: int) -> CannedResponse:
        return access_canned_response(account_id=self.account_id, canned_id=canned_id)

    @extend_schema(responses=CannedOutputSerializer)
    def get(self, request: Request, account_id: int, canned_id: int) -> Response:
        return Response(CannedOutputSerializer(self._canned(canned_id)).data)

    def _update(self, request: Request, canned_id: int) -> Response:
        canned = self._canned(canned_id)
        data = CannedUpdateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        with service_errors_as_400():
            canned = canned_response_update(canned=canned, **data.validated_data)
        return Response(CannedOutputSerializer(canned).data)

    @extend_schema(request=CannedUpdateSerializer, responses=CannedOutputSerializer)
    def patch(self, request: Request, account_id: int, canned_id: int) -> Response:
        return self._update(request, canned_id)

    @extend_schema(request=CannedUpdateSerializer, responses=CannedOutputSerializer)
    def put(self, request: Request, account_id: int, canned_id: int) -> Response:
        return self._update(request, canned_id)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, account_id: int, canned_id: int) -> Response:
        canned_response_delete(canned=self._canned(canned_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


urlpatterns = [
    path("accounts/<id:account_id>/canned-responses/", CannedCollectionApi.as_view(), name="canned-list"),
    path(
        "accounts/<id:account_id>/canned-responses/<id:canned_id>/",
        CannedDetailApi.as_view(),
        name="canned-detail",
    ),
]
