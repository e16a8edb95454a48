"""Shortcuts of an assistant: `accounts/<id>/assistants/<aid>/shortcuts/[<sid>/]`.

A shortcut is a quick command customers type (`/track 12345`). The rules (Telegram's command rule, parameters'
shape, the tool among the team's tools, templates over declared parameters only) are the service's
(`captain.actions.services.shortcuts`); a violation answers 400 with messages per field. Saving or deleting one updates
the command menu of the assistant's Telegram bots.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from captain.actions.models import SHORTCUT_COMMAND_RE, Shortcut
from captain.actions.services.shortcuts import (
    MAX_TEMPLATE_CHARS,
    SHORTCUT_FIELDS,
    access_shortcut,
    shortcut_create,
    shortcut_delete,
    shortcut_list,
    shortcut_update,
)
from captain.api.errors import service_errors_as_400
from captain.assistants.selectors import access_assistant
from helpdesk.api.auth import AccountAdminOrReadOnlyApi, Pagination, paginated_response
from helpdesk.api.schema import pattern_field


class ShortcutOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = Shortcut
        ref_name = "Shortcut"
        fields = ["id", *SHORTCUT_FIELDS, "created_at"]
        read_only_fields = fields


class ShortcutInputSerializer(serializers.Serializer):
    """The shape of a write; what the values may be is checked by the service."""

    command = pattern_field(
        SHORTCUT_COMMAND_RE.pattern,
        "Lowercase letters, digits and _, starting with a letter (at most 32).",
        max_length=32,
    )
    description = serializers.CharField(max_length=256)
    parameters = serializers.JSONField(default=list)
    action = serializers.ChoiceField(choices=Shortcut.Action.choices, default=Shortcut.Action.TOOL)
    tool_name = serializers.CharField(max_length=64, allow_blank=True, default="")
    tool_arguments = serializers.JSONField(default=dict)
    message_template = serializers.CharField(max_length=MAX_TEMPLATE_CHARS, allow_blank=True, default="")
    enabled = serializers.BooleanField(default=True)

    class Meta:
        ref_name = "ShortcutInput"


class ShortcutCollectionApi(AccountAdminOrReadOnlyApi):
    """`GET` an assistant's shortcuts / `POST` a new one (administrators)."""

    pagination_class = Pagination
    InputSerializer = ShortcutInputSerializer
    OutputSerializer = ShortcutOutputSerializer

    @extend_schema(responses=OutputSerializer(many=True))
    def get(self, request: Request, account_id: int, assistant_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        return paginated_response(
            request=request,
            view=self,
            queryset=shortcut_list(assistant=assistant),
            serializer_class=self.OutputSerializer,
        )

    @extend_schema(request=InputSerializer, responses={201: OutputSerializer})
    def post(self, request: Request, account_id: int, assistant_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        with service_errors_as_400():
            shortcut = shortcut_create(assistant=assistant, **data.validated_data)
        return Response(self.OutputSerializer(shortcut).data, status=status.HTTP_201_CREATED)


class ShortcutDetailApi(AccountAdminOrReadOnlyApi):
    """`GET`, `PUT`/`PATCH`, `DELETE` one shortcut (writes: administrators)."""

    InputSerializer = ShortcutInputSerializer
    OutputSerializer = ShortcutOutputSerializer

    def _shortcut(self, assistant_id: int, shortcut_id: int) -> Shortcut:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        return access_shortcut(assistant=assistant, shortcut_id=shortcut_id)

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request, account_id: int, assistant_id: int, shortcut_id: int) -> Response:
        return Response(self.OutputSerializer(self._shortcut(assistant_id, shortcut_id)).data)

    def _update(self, request: Request, assistant_id: int, shortcut_id: int, *, partial: bool) -> Response:
        shortcut = self._shortcut(assistant_id, shortcut_id)
        data = self.InputSerializer(data=request.data, partial=partial)
        data.is_valid(raise_exception=True)
        with service_errors_as_400():
            shortcut = shortcut_update(shortcut=shortcut, **data.validated_data)
        return Response(self.OutputSerializer(shortcut).data)

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def put(self, request: Request, account_id: int, assistant_id: int, shortcut_id: int) -> Response:
        return self._update(request, assistant_id, shortcut_id, partial=False)

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def patch(self, request: Request, account_id: int, assistant_id: int, shortcut_id: int) -> Response:
        return self._update(request, assistant_id, shortcut_id, partial=True)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, account_id: int, assistant_id: int, shortcut_id: int) -> Response:
        shortcut_delete(shortcut=self._shortcut(assistant_id, shortcut_id))
        return Response(status=status.HTTP_204_NO_CONTENT)
