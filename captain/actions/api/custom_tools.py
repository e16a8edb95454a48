"""Custom HTTP tools of an account: `accounts/<id>/custom-tools/[<tid>/[test-call/]]` (administrators only).

The secret is write-only (stored encrypted, never returned; `has_secret` says whether one is stored). The rules
(templates in the sandbox, the URL through the outbound policy, limits) are the service's
(`captain.actions.services.custom_tools`); a refused write answers 400 with messages per field and stores nothing.
`test-call` sends one request with the given arguments and answers with the request (credentials redacted)
and the response or the error.
"""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from captain.actions.models import CUSTOM_TOOL_NAME_PATTERN, CustomTool
from captain.actions.services.custom_tools import (
    CUSTOM_TOOL_FIELDS,
    MAX_RESPONSE_BYTES,
    MAX_TIMEOUT_SECONDS,
    custom_tool_delete,
    custom_tool_save,
    custom_tool_test_call,
)
from captain.api.errors import service_errors_as_400
from captain.assistants.services.destinations import SECRET_DROPPED_MESSAGE
from helpdesk.api.auth import AccountAdminApi
from helpdesk.api.schema import pattern_field
from helpdesk.models import Account


class CustomToolOutputSerializer(serializers.ModelSerializer):
    has_secret = serializers.SerializerMethodField()
    needs_confirmation = serializers.BooleanField(read_only=True)
    notices = serializers.SerializerMethodField(
        help_text="What this write did besides storing the fields, e.g. a secret removed because the URL's "
        "scheme, host or port changed (it must be given again). Empty on reads."
    )

    class Meta:
        model = CustomTool
        ref_name = "CustomTool"
        fields = [
            "id", *CUSTOM_TOOL_FIELDS, "has_secret", "needs_confirmation", "notices", "created_at", "updated_at",
        ]  # fmt: skip
        read_only_fields = fields

    def get_has_secret(self, tool: CustomTool) -> bool:
        return bool(tool.secret_encrypted)

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_notices(self, tool: CustomTool) -> list[str]:
        return list(self.context.get("notices", []))


class CustomToolInputSerializer(serializers.Serializer):
    """The shape of a write; the rules are the service's."""

    name = pattern_field(
        CUSTOM_TOOL_NAME_PATTERN,
        "Lowercase letters, digits and underscores, starting with a letter (at most 48).",
        max_length=48,
    )
    description = serializers.CharField(max_length=2000)
    parameters = serializers.JSONField(required=False)
    method = serializers.ChoiceField(choices=CustomTool.Method.choices, required=False)
    url_template = serializers.CharField(max_length=2000)
    body_template = serializers.CharField(max_length=20_000, required=False, allow_blank=True)
    auth_type = serializers.ChoiceField(choices=CustomTool.Auth.choices, required=False)
    auth_header = serializers.CharField(max_length=100, required=False, allow_blank=True)
    auth_username = serializers.CharField(max_length=200, required=False, allow_blank=True)
    identity_header = serializers.CharField(max_length=100, required=False, allow_blank=True)
    timeout_seconds = serializers.FloatField(required=False, min_value=0.1, max_value=MAX_TIMEOUT_SECONDS)
    max_response_bytes = serializers.IntegerField(required=False, min_value=1, max_value=MAX_RESPONSE_BYTES)
    response_path = serializers.CharField(max_length=500, required=False, allow_blank=True)
    response_template = serializers.CharField(max_length=20_000, required=False, allow_blank=True)
    safe = serializers.BooleanField(required=False)
    confirmation_template = serializers.CharField(max_length=2000, required=False, allow_blank=True)
    enabled = serializers.BooleanField(required=False)
    secret = serializers.CharField(
        max_length=4000,
        required=False,
        allow_blank=True,
        write_only=True,
        trim_whitespace=True,
        help_text='Write-only: the bearer token, password or API key. Omitted: keep the stored one; "": clear it.',
    )

    class Meta:
        ref_name = "CustomToolInput"


class TestCallInputSerializer(serializers.Serializer):
    arguments = serializers.DictField(required=False, default=dict)

    class Meta:
        ref_name = "CustomToolTestCallInput"


class TestCallOutputSerializer(serializers.Serializer):
    request = serializers.DictField()
    response = serializers.DictField(allow_null=True)
    shown_to_model = serializers.CharField(allow_blank=True)
    error = serializers.CharField(allow_blank=True)
    attempts = serializers.IntegerField()
    elapsed_ms = serializers.FloatField()

    class Meta:
        ref_name = "CustomToolTestCall"


def _save(account_id: int, data: dict[str, Any], tool: CustomTool | None) -> tuple[CustomTool, list[str]]:
    """The saved tool and the notices for the answer."""
    secret = data.pop("secret", None)
    had_secret = bool(tool and tool.secret_encrypted)
    with service_errors_as_400():
        saved = custom_tool_save(
            account=Account.objects.get(pk=account_id), fields=data, secret=secret, tool=tool
        )
    dropped = had_secret and secret is None and not saved.secret_encrypted
    return saved, [SECRET_DROPPED_MESSAGE] if dropped else []


class CustomToolCollectionApi(AccountAdminApi):
    """`GET` the account's custom tools / `POST` a new one."""

    InputSerializer = CustomToolInputSerializer
    OutputSerializer = CustomToolOutputSerializer

    @extend_schema(operation_id="custom_tools_list", responses=OutputSerializer(many=True))
    def get(self, request: Request, account_id: int) -> Response:
        tools = CustomTool.objects.filter(account_id=self.account_id)
        return Response(self.OutputSerializer(tools, many=True).data)

    @extend_schema(request=InputSerializer, responses={201: OutputSerializer})
    def post(self, request: Request, account_id: int) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        tool, notices = _save(self.account_id, dict(data.validated_data), None)
        answer = self.OutputSerializer(tool, context={"notices": notices}).data
        return Response(answer, status=status.HTTP_201_CREATED)


class CustomToolDetailApi(AccountAdminApi):
    """`GET`, `PATCH`, `DELETE` one of the account's custom tools (another account's is a 404)."""

    InputSerializer = CustomToolInputSerializer
    OutputSerializer = CustomToolOutputSerializer

    def _tool(self, tool_id: int) -> CustomTool:
        return get_object_or_404(CustomTool, pk=tool_id, account_id=self.account_id)

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request, account_id: int, tool_id: int) -> Response:
        return Response(self.OutputSerializer(self._tool(tool_id)).data)

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def patch(self, request: Request, account_id: int, tool_id: int) -> Response:
        tool = self._tool(tool_id)
        data = self.InputSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        if not data.validated_data:
            # Nothing to change: neither a write (updated_at) nor the URL's checks against the outbound policy,
            # which could refuse a destination accepted when it was saved.
            return Response(self.OutputSerializer(tool).data)
        tool, notices = _save(self.account_id, dict(data.validated_data), tool)
        return Response(self.OutputSerializer(tool, context={"notices": notices}).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, account_id: int, tool_id: int) -> Response:
        custom_tool_delete(tool=self._tool(tool_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class CustomToolTestCallApi(AccountAdminApi):
    """`POST {"arguments": {...}}`: send one real request (a POST really changes something) and answer with
    the request (credentials redacted) and the response or the error, whatever the service answered."""

    InputSerializer = TestCallInputSerializer
    OutputSerializer = TestCallOutputSerializer

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def post(self, request: Request, account_id: int, tool_id: int) -> Response:
        tool = get_object_or_404(CustomTool, pk=tool_id, account_id=self.account_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(custom_tool_test_call(tool, data.validated_data["arguments"]))
