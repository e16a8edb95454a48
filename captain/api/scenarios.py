"""Scenarios of an assistant: `accounts/<id>/assistants/<aid>/scenarios/[<sid>/]`.

A scenario's `key` names its handoff tool (`handoff_to_<key>`). It is optional on creation (derived from the
title), unique per assistant, and read-only afterwards: renaming the title never changes it.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from helpdesk.api.auth import AccountAdminOrReadOnlyApi, Pagination, paginated_response

from ..forms import (
    MAX_INSTRUCTION_CHARS,
    scenario_key_from_title,
    validate_builder_template,
    validate_scenario_tools,
)
from ..models import MAX_SCENARIO_KEY_LENGTH, Assistant, Scenario, validate_scenario_key
from ..selectors import access_assistant, access_scenario, scenario_list

SCENARIO_FIELDS = ["title", "key", "description", "instruction", "enabled", "tools"]


class ScenarioOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = Scenario
        ref_name = "Scenario"
        fields = ["id", *SCENARIO_FIELDS, "created_at"]
        read_only_fields = fields


class ScenarioInputSerializer(serializers.Serializer):
    """`context["assistant"]` is the (access-checked) parent; `instance` is set for updates."""

    title = serializers.CharField(max_length=200)
    key = serializers.CharField(
        max_length=MAX_SCENARIO_KEY_LENGTH, required=False, validators=[validate_scenario_key]
    )
    description = serializers.CharField(max_length=5000)
    instruction = serializers.CharField(
        max_length=MAX_INSTRUCTION_CHARS, validators=[validate_builder_template]
    )
    enabled = serializers.BooleanField(default=True)
    tools = serializers.ListField(
        child=serializers.CharField(max_length=64),
        max_length=20,
        default=list,
        validators=[validate_scenario_tools],
    )

    class Meta:
        ref_name = "ScenarioInput"

    def validate_tools(self, tools: list[str]) -> list[str]:
        return list(dict.fromkeys(tools))

    def validate(self, attrs: dict) -> dict:
        assistant: Assistant = self.context["assistant"]
        key = attrs.get("key")
        if self.instance is not None:
            if key is not None and key != self.instance.key:
                raise serializers.ValidationError(
                    {"key": [f"The key is fixed at creation ('{self.instance.key}') and cannot be changed."]}
                )
            return attrs
        taken = set(scenario_list(assistant=assistant).values_list("key", flat=True))
        if key is None:
            attrs["key"] = scenario_key_from_title(attrs["title"], taken=taken, position=len(taken) + 1)
        elif key in taken:
            raise serializers.ValidationError(
                {"key": [f"This assistant already has a scenario with key '{key}'."]}
            )
        return attrs


def scenario_create(*, assistant: Assistant, data: dict) -> Scenario:
    try:
        with transaction.atomic():
            return Scenario.objects.create(assistant=assistant, **data)
    except IntegrityError as exc:  # a concurrent create took the key between our check and our insert
        raise serializers.ValidationError(
            {"key": [f"This assistant already has a scenario with key '{data['key']}'."]}
        ) from exc


def scenario_update(*, scenario: Scenario, data: dict) -> Scenario:
    data.pop("key", None)  # validated equal to the stored key
    for name, value in data.items():
        setattr(scenario, name, value)
    if data:
        scenario.save(update_fields=list(data))
    return scenario


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
        data = self.InputSerializer(
            data=request.data, context={**self.serializer_context(), "assistant": assistant}
        )
        data.is_valid(raise_exception=True)
        scenario = scenario_create(assistant=assistant, data=dict(data.validated_data))
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
        data = self.InputSerializer(
            scenario,
            data=request.data,
            partial=partial,
            context={**self.serializer_context(), "assistant": scenario.assistant},
        )
        data.is_valid(raise_exception=True)
        scenario = scenario_update(scenario=scenario, data=dict(data.validated_data))
        return Response(self.OutputSerializer(scenario).data)

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def put(self, request: Request, account_id: int, assistant_id: int, scenario_id: int) -> Response:
        return self._update(request, assistant_id, scenario_id, partial=False)

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def patch(self, request: Request, account_id: int, assistant_id: int, scenario_id: int) -> Response:
        return self._update(request, assistant_id, scenario_id, partial=True)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, account_id: int, assistant_id: int, scenario_id: int) -> Response:
        self._scenario(assistant_id, scenario_id).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)
