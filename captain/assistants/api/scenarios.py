"""Scenarios of an assistant: `accounts/<id>/assistants/<aid>/scenarios/[<sid>/]`.

A scenario's `key` names its handoff tool (`handoff_to_<key>`). It is optional on creation (derived from the
title), unique per assistant, and read-only afterwards: renaming the title never changes it.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from captain.api.errors import service_errors_as_400
from captain.assistants.models import MAX_SCENARIO_KEY_LENGTH, SCENARIO_KEY_RE, Scenario, ScenarioMode
from captain.assistants.selectors import access_assistant, access_scenario, scenario_list
from captain.assistants.services.builder import MAX_INSTRUCTION_CHARS
from captain.assistants.services.scenarios import (
    MAX_TOOL_CALLS_LIMIT,
    SCENARIO_FIELDS,
    scenario_create,
    scenario_delete,
    scenario_update,
)
from helpdesk.api.auth import AccountAdminOrReadOnlyApi, Pagination, paginated_response
from helpdesk.api.schema import pattern_field


class ScenarioOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = Scenario
        ref_name = "Scenario"
        fields = ["id", *SCENARIO_FIELDS, "handoff_team", "created_at"]
        read_only_fields = fields


class ScenarioInputSerializer(serializers.Serializer):
    """The shape of a write; the rules (template sandbox, tool allowlist, key unique and fixed) are the
    service's (`captain.assistants.services.scenarios`)."""

    title = serializers.CharField(max_length=200)
    # The pattern is documented; the reserved key is refused by the service (validate_scenario_key).
    key = pattern_field(
        SCENARIO_KEY_RE.pattern,
        "Use lowercase letters, digits and underscores only.",
        max_length=MAX_SCENARIO_KEY_LENGTH,
        required=False,
    )
    description = serializers.CharField(max_length=5000)
    instruction = serializers.CharField(max_length=MAX_INSTRUCTION_CHARS)
    enabled = serializers.BooleanField(default=True)
    # Built-in tools and the account's custom tools (checked by the service against this account's only).
    tools = serializers.ListField(child=serializers.CharField(max_length=64), max_length=20, default=list)
    mode = serializers.ChoiceField(choices=ScenarioMode.choices, required=False)
    max_tool_calls = serializers.IntegerField(required=False, min_value=1, max_value=MAX_TOOL_CALLS_LIMIT)
    # Empty / null: the assistant's (the service checks a choice against the models the account may use).
    model_endpoint = serializers.CharField(max_length=100, required=False, allow_blank=True)
    model = serializers.CharField(max_length=200, required=False, allow_blank=True)
    temperature = serializers.FloatField(required=False, allow_null=True, min_value=0, max_value=2)
    # A team of this account (the service checks it); null: the routing node's team, else nobody in particular.
    handoff_team_id = serializers.IntegerField(required=False, allow_null=True, min_value=1)

    class Meta:
        ref_name = "ScenarioInput"


class ScenarioCollectionApi(AccountAdminOrReadOnlyApi):
    """`GET` an assistant's scenarios / `POST` a new one (administrators)."""

    pagination_class = Pagination
    InputSerializer = ScenarioInputSerializer
    OutputSerializer = ScenarioOutputSerializer

    @extend_schema(responses=OutputSerializer(many=True))
    def get(self, request: Request, account_id: int, assistant_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        return paginated_response(
            request=request,
            view=self,
            queryset=scenario_list(assistant=assistant),
            serializer_class=self.OutputSerializer,
        )

    @extend_schema(request=InputSerializer, responses={201: OutputSerializer})
    def post(self, request: Request, account_id: int, assistant_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        with service_errors_as_400():
            scenario = scenario_create(assistant=assistant, **data.validated_data)
        return Response(self.OutputSerializer(scenario).data, status=status.HTTP_201_CREATED)


class ScenarioDetailApi(AccountAdminOrReadOnlyApi):
    """`GET`, `PUT`/`PATCH`, `DELETE` one scenario (writes: administrators). A different key is a 400."""

    InputSerializer = ScenarioInputSerializer
    OutputSerializer = ScenarioOutputSerializer

    def _scenario(self, assistant_id: int, scenario_id: int) -> Scenario:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        return access_scenario(assistant=assistant, scenario_id=scenario_id)

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request, account_id: int, assistant_id: int, scenario_id: int) -> Response:
        return Response(self.OutputSerializer(self._scenario(assistant_id, scenario_id)).data)

    def _update(self, request: Request, assistant_id: int, scenario_id: int, *, partial: bool) -> Response:
        scenario = self._scenario(assistant_id, scenario_id)
        data = self.InputSerializer(scenario, data=request.data, partial=partial)
        data.is_valid(raise_exception=True)
        with service_errors_as_400():
            scenario = scenario_update(scenario=scenario, **data.validated_data)
        return Response(self.OutputSerializer(scenario).data)

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def put(self, request: Request, account_id: int, assistant_id: int, scenario_id: int) -> Response:
        return self._update(request, assistant_id, scenario_id, partial=False)

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def patch(self, request: Request, account_id: int, assistant_id: int, scenario_id: int) -> Response:
        return self._update(request, assistant_id, scenario_id, partial=True)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, account_id: int, assistant_id: int, scenario_id: int) -> Response:
        scenario_delete(scenario=self._scenario(assistant_id, scenario_id))
        return Response(status=status.HTTP_204_NO_CONTENT)
