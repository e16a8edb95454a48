"""Model endpoints an account may pick: `accounts/<id>/model-endpoints/[<eid>/]` (administrators only).

`GET` the collection lists the server's endpoints (name, models, credits per reply) and the account's own.
An account's own endpoint is its URL with its key: the key is write-only (stored encrypted, never returned),
and the URL must pass the outbound HTTP policy. Assistants and routers refer to endpoints by name.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from captain.assistants.models import ModelEndpoint
from captain.assistants.services.destinations import SECRET_DROPPED_MESSAGE
from captain.assistants.services.model_endpoints import (
    model_endpoint_delete,
    model_endpoint_save,
    operator_endpoints,
)
from helpdesk.api.auth import AccountAdminApi
from helpdesk.api.schema import REFUSES_400
from helpdesk.models import Account


class ServerModelSerializer(serializers.Serializer):
    name = serializers.CharField()
    credits_per_reply = serializers.IntegerField()

    class Meta:
        ref_name = "ServerModel"


class ServerEndpointSerializer(serializers.Serializer):
    name = serializers.CharField()
    models = ServerModelSerializer(many=True)

    class Meta:
        ref_name = "ServerModelEndpoint"


class OwnEndpointOutputSerializer(serializers.ModelSerializer):
    has_api_key = serializers.SerializerMethodField()
    notices = serializers.SerializerMethodField(
        help_text="What this write did besides storing the fields, e.g. the API key removed because the base "
        "URL's scheme, host or port changed (it must be given again). Empty on reads."
    )

    class Meta:
        model = ModelEndpoint
        ref_name = "OwnModelEndpoint"
        fields = [
            "id", "name", "base_url", "model_names", "text_tool_models", "has_api_key", "notices", "created_at",
        ]  # fmt: skip
        read_only_fields = fields

    def get_has_api_key(self, endpoint: ModelEndpoint) -> bool:
        return bool(endpoint.api_key_encrypted)

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_notices(self, endpoint: ModelEndpoint) -> list[str]:
        return list(self.context.get("notices", []))


class EndpointListSerializer(serializers.Serializer):
    server = ServerEndpointSerializer(many=True)
    own = OwnEndpointOutputSerializer(many=True)

    class Meta:
        ref_name = "ModelEndpointList"


class OwnEndpointInputSerializer(serializers.Serializer):
    # Not trimmed, so the documented pattern is what is accepted.
    name = serializers.RegexField(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=100, trim_whitespace=False)
    # Checked by the outbound policy in the service (scheme, address, allowlist), not only for URL syntax.
    base_url = serializers.CharField(max_length=500)
    model_names = serializers.ListField(
        child=serializers.CharField(max_length=200), max_length=50, required=False, default=list
    )
    text_tool_models = serializers.ListField(
        child=serializers.CharField(max_length=200),
        max_length=50,
        required=False,
        help_text="Its models that cannot return native tool calls: their agents use the text tool protocol "
        "(`manage.py captain_probe_tools` detects it). Omitted: keep the stored list.",
    )
    api_key = serializers.CharField(
        max_length=1000,
        required=False,
        write_only=True,
        help_text="Write-only; omitted: keep the stored key.",
    )

    class Meta:
        ref_name = "OwnModelEndpointInput"


def _save(account_id: int, data: dict, endpoint: ModelEndpoint | None) -> ModelEndpoint:
    """Create, or update with only the fields sent (PATCH); a missing `api_key` keeps the stored one."""
    current = (
        {"name": endpoint.name, "base_url": endpoint.base_url, "model_names": list(endpoint.model_names)}
        if endpoint
        else {"model_names": []}
    )
    merged = {**current, **data}
    try:
        return model_endpoint_save(
            account=Account.objects.get(pk=account_id),
            name=merged["name"],
            base_url=merged["base_url"],
            model_names=merged["model_names"],
            api_key=data.get("api_key"),
            endpoint=endpoint,
            text_tool_models=data.get("text_tool_models"),
        )
    except DjangoValidationError as exc:
        errors = exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        raise serializers.ValidationError(errors) from exc


class ModelEndpointCollectionApi(AccountAdminApi):
    """`GET` the endpoints this account may pick / `POST` a new own endpoint."""

    InputSerializer = OwnEndpointInputSerializer

    @extend_schema(operation_id="model_endpoints_list", responses=EndpointListSerializer)
    def get(self, request: Request, account_id: int) -> Response:
        server = [
            {
                "name": e.name,
                "models": [{"name": m, "credits_per_reply": c} for m, c in e.model_credits.items()],
            }
            for e in operator_endpoints().values()
        ]
        own = ModelEndpoint.objects.filter(account_id=self.account_id)
        return Response({"server": server, "own": OwnEndpointOutputSerializer(own, many=True).data})

    @extend_schema(request=InputSerializer, responses={201: OwnEndpointOutputSerializer})
    def post(self, request: Request, account_id: int) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        endpoint = _save(self.account_id, dict(data.validated_data), None)
        return Response(OwnEndpointOutputSerializer(endpoint).data, status=status.HTTP_201_CREATED)


class ModelEndpointDetailApi(AccountAdminApi):
    """`GET`, `PATCH`, `DELETE` one of the account's own endpoints."""

    InputSerializer = OwnEndpointInputSerializer

    def _endpoint(self, endpoint_id: int) -> ModelEndpoint:
        return get_object_or_404(ModelEndpoint, pk=endpoint_id, account_id=self.account_id)

    @extend_schema(responses=OwnEndpointOutputSerializer)
    def get(self, request: Request, account_id: int, endpoint_id: int) -> Response:
        return Response(OwnEndpointOutputSerializer(self._endpoint(endpoint_id)).data)

    @extend_schema(request=InputSerializer, responses=OwnEndpointOutputSerializer)
    def patch(self, request: Request, account_id: int, endpoint_id: int) -> Response:
        endpoint = self._endpoint(endpoint_id)
        data = self.InputSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        had_key = bool(endpoint.api_key_encrypted)
        endpoint = _save(self.account_id, dict(data.validated_data), endpoint)
        dropped = had_key and "api_key" not in data.validated_data and not endpoint.api_key_encrypted
        notices = [SECRET_DROPPED_MESSAGE] if dropped else []
        return Response(OwnEndpointOutputSerializer(endpoint, context={"notices": notices}).data)

    @extend_schema(responses={204: None, **REFUSES_400})
    def delete(self, request: Request, account_id: int, endpoint_id: int) -> Response:
        try:
            model_endpoint_delete(endpoint=self._endpoint(endpoint_id))
        except DjangoValidationError as exc:
            raise serializers.ValidationError({"non_field_errors": exc.messages}) from exc
        return Response(status=status.HTTP_204_NO_CONTENT)
