"""Example messages the product proposed for an assistant's routing nodes (drafted by the model, or learned from
corrections) and their review. Administrators only: corrections quote customers' messages.

- `accounts/<id>/assistants/<aid>/routing-examples/?key=&source=&status=`: GET the list.
- `.../routing-examples/<eid>/`: GET one, PATCH its `text` (editing a drafted suggestion accepts it).
- `.../routing-examples/<eid>/accept/` and `/reject/`: POST. Accepting may move the example to another node
  (`{"key": "<node>"}`, for a correction whose right node the reviewer chose).
- `.../scenarios/<sid>/draft-examples/`: POST queues drafting for the scenario's node again (202), even when its
  texts did not change; the new drafts replace its untouched suggestions.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from captain.api.errors import service_errors_as_400
from captain.assistants.models import Assistant
from captain.assistants.selectors import access_assistant, access_scenario
from captain.routing.models import RoutingExample
from captain.routing.services.example_drafts import example_drafts_enqueue, routing_example_edit
from captain.routing.services.routing import routing_reference_errors
from captain.routing.services.routing_examples import review_examples
from helpdesk.api.auth import AccountAdminApi, Pagination, paginated_response
from helpdesk.api.schema import REFUSES_400

FILTERS = {
    "source": RoutingExample.Source.values,
    "status": RoutingExample.Status.values,
}


def routing_example_list(*, assistant: Assistant) -> QuerySet[RoutingExample]:
    return RoutingExample.objects.filter(assistant=assistant, account_id=assistant.account_id).order_by("id")


def access_routing_example(*, assistant: Assistant, example_id: int) -> RoutingExample:
    """An example of an assistant already obtained through `access_assistant`; 404 otherwise."""
    example = routing_example_list(assistant=assistant).filter(pk=example_id).first()
    if example is None:
        raise Http404("No such routing example.")
    return example


def correction_signal_field() -> serializers.ChoiceField:
    """`signal` as answered: a drafted example has none and answers the stored "" (ModelSerializer drops
    `allow_blank` from a read-only field, so the schema would list only the three signals)."""
    return serializers.ChoiceField(
        choices=RoutingExample.Signal.choices,
        allow_blank=True,
        read_only=True,
        help_text='What revealed a correction; "" for an example that is not one.',
    )


class RoutingExampleOutputSerializer(serializers.ModelSerializer):
    signal = correction_signal_field()

    class Meta:
        model = RoutingExample
        ref_name = "RoutingExample"
        fields = [
            "id",
            "key",
            "text",
            "source",
            "status",
            "signal",
            "routed_to",
            "drafted_from",
            "conversation",
            "message",
            "created_at",
            "reviewed_at",
        ]
        read_only_fields = fields


class RoutingExampleEditSerializer(serializers.Serializer):
    # Optional: a PATCH of `{}` changes nothing (and does not accept a suggestion).
    text = serializers.CharField(max_length=500, required=False)

    class Meta:
        ref_name = "RoutingExampleEdit"


class RoutingExampleAcceptSerializer(serializers.Serializer):
    key = serializers.CharField(
        max_length=64,
        required=False,
        help_text="Accept it for this node instead (a correction's right node).",
    )

    class Meta:
        ref_name = "RoutingExampleAccept"


class RoutingExampleCollectionApi(AccountAdminApi):
    """`GET` the assistant's proposed routing examples, filtered by node `key`, `source` and `status`."""

    pagination_class = Pagination
    OutputSerializer = RoutingExampleOutputSerializer

    @extend_schema(
        parameters=[
            OpenApiParameter("key", str, required=False, description="Only this node's examples."),
            OpenApiParameter("source", str, enum=FILTERS["source"], required=False),
            OpenApiParameter("status", str, enum=FILTERS["status"], required=False),
        ],
        responses=OutputSerializer(many=True),
    )
    def get(self, request: Request, account_id: int, assistant_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        examples = routing_example_list(assistant=assistant)
        key = request.query_params.get("key")
        if key:
            examples = examples.filter(key=key)
        for name, allowed in FILTERS.items():
            wanted = request.query_params.get(name)
            if wanted is None:
                continue
            if wanted not in allowed:
                raise serializers.ValidationError(
                    {name: [f"Unknown {name} {wanted!r}: use one of {', '.join(allowed)}."]}
                )
            examples = examples.filter(**{name: wanted})
        return paginated_response(
            request=request, view=self, queryset=examples, serializer_class=self.OutputSerializer
        )


class RoutingExampleDetailApi(AccountAdminApi):
    """`GET` one proposed example / `PATCH` its text (a drafted suggestion is accepted by the edit)."""

    InputSerializer = RoutingExampleEditSerializer
    OutputSerializer = RoutingExampleOutputSerializer

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request, account_id: int, assistant_id: int, example_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        example = access_routing_example(assistant=assistant, example_id=example_id)
        return Response(self.OutputSerializer(example).data)

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def patch(self, request: Request, account_id: int, assistant_id: int, example_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        example = access_routing_example(assistant=assistant, example_id=example_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        if "text" in data.validated_data:
            with service_errors_as_400():
                example = routing_example_edit(example=example, text=data.validated_data["text"])
        return Response(self.OutputSerializer(example).data)


class RoutingExampleAcceptApi(AccountAdminApi):
    """`POST` accept one example: the router uses it (next to the builder's examples)."""

    InputSerializer = RoutingExampleAcceptSerializer
    OutputSerializer = RoutingExampleOutputSerializer

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def post(self, request: Request, account_id: int, assistant_id: int, example_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        example = access_routing_example(assistant=assistant, example_id=example_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        key = data.validated_data.get("key")
        if key and key != example.key:
            errors = routing_reference_errors(assistant=assistant, where="key", key=key, target=False)
            if routing_example_list(assistant=assistant).filter(key=key, text=example.text).exists():
                errors.append(f"Node {key!r} already has this example.")
            if errors:
                raise serializers.ValidationError({"key": errors})
        review_examples(assistant=assistant, ids=[example.pk], accept=True, key=key)
        example.refresh_from_db()
        return Response(self.OutputSerializer(example).data)


class RoutingExampleRejectApi(AccountAdminApi):
    """`POST` reject one example: kept (a drafted text is not proposed again), never used by the router."""

    OutputSerializer = RoutingExampleOutputSerializer

    @extend_schema(request=None, responses=OutputSerializer)
    def post(self, request: Request, account_id: int, assistant_id: int, example_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        example = access_routing_example(assistant=assistant, example_id=example_id)
        review_examples(assistant=assistant, ids=[example.pk], accept=False)
        example.refresh_from_db()
        return Response(self.OutputSerializer(example).data)


class ExampleDraftsQueuedSerializer(serializers.Serializer):
    queued = serializers.BooleanField()

    class Meta:
        ref_name = "ExampleDraftsQueued"


class ScenarioDraftExamplesApi(AccountAdminApi):
    """`POST`: queue drafting routing examples for the scenario's node again (202; they arrive as suggestions
    replacing its untouched ones). 400 when drafting is turned off on this server."""

    @extend_schema(request=None, responses={202: ExampleDraftsQueuedSerializer, **REFUSES_400})
    def post(self, request: Request, account_id: int, assistant_id: int, scenario_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        scenario = access_scenario(assistant=assistant, scenario_id=scenario_id)
        if not example_drafts_enqueue(scenario_id=scenario.pk, force=True):
            raise serializers.ValidationError(
                {"scenario": ["Drafting routing examples is turned off on this server."]}
            )
        return Response({"queued": True}, status=status.HTTP_202_ACCEPTED)
