"""Assistants: `accounts/<id>/assistants/` (list, create) and `.../assistants/<aid>/` (read, update, delete).

Members of the account may read; only its administrators may write. `inbox_ids` connects inboxes of the same
account (an inbox is served by at most one assistant).
"""

from __future__ import annotations

from django.db import IntegrityError, transaction
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from helpdesk.api.auth import AccountAdminOrReadOnlyApi, Pagination, paginated_response
from helpdesk.models import Inbox

from ..conf import captain_setting
from ..forms import MAX_INSTRUCTION_CHARS, validate_builder_template
from ..models import Assistant, AssistantInbox
from ..selectors import access_assistant, assistant_list
from ..services.model_endpoints import model_choice_errors
from ..services.routing import routing_enable_default

ASSISTANT_FIELDS = [
    "name",
    "description",
    "product_name",
    "instructions",
    "response_guidelines",
    "guardrails",
    "handoff_message",
    "resolution_message",
    "model_endpoint",
    "model",
    "temperature",
    "max_turns",
]


class AssistantOutputSerializer(serializers.ModelSerializer):
    inbox_ids = serializers.SerializerMethodField()

    class Meta:
        model = Assistant
        ref_name = "Assistant"
        fields = ["id", *ASSISTANT_FIELDS, "inbox_ids", "created_at"]
        read_only_fields = fields

    def get_inbox_ids(self, assistant: Assistant) -> list[int]:
        return sorted(link.inbox_id for link in assistant.assistant_inboxes.all())


class AssistantInputSerializer(serializers.ModelSerializer):
    """Writable assistant fields; `instructions` must render in the prompt sandbox (checked here, at save)."""

    instructions = serializers.CharField(
        max_length=MAX_INSTRUCTION_CHARS,
        allow_blank=True,
        required=False,
        validators=[validate_builder_template],
    )
    response_guidelines = serializers.ListField(
        child=serializers.CharField(max_length=500), max_length=50, required=False
    )
    guardrails = serializers.ListField(
        child=serializers.CharField(max_length=500), max_length=50, required=False
    )
    temperature = serializers.FloatField(min_value=0.0, max_value=2.0, required=False)
    max_turns = serializers.IntegerField(min_value=1, required=False)
    inbox_ids = serializers.PrimaryKeyRelatedField(many=True, queryset=Inbox.objects.none(), required=False)

    class Meta:
        model = Assistant
        ref_name = "AssistantInput"
        fields = [*ASSISTANT_FIELDS, "inbox_ids"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Scoped per request: another tenant's inbox id is "does not exist", never linkable. Without an
        # account in the context (schema generation) no inbox qualifies.
        if "account_id" in self.context:
            self.fields["inbox_ids"].child_relation.queryset = Inbox.objects.filter(
                account_id=self.context["account_id"]
            )

    def validate_max_turns(self, value: int) -> int:
        cap = captain_setting("MAX_TURNS_CAP")
        if value > cap:
            raise serializers.ValidationError(f"At most {cap} (the server's MAX_TURNS_CAP).")
        return value

    def validate(self, attrs: dict) -> dict:
        # The endpoint/model pair is checked together, against what this account may pick (never a URL).
        if ("model_endpoint" in attrs or "model" in attrs) and "account_id" in self.context:
            current = self.instance
            problems = model_choice_errors(
                account_id=self.context["account_id"],
                endpoint=attrs.get("model_endpoint", current.model_endpoint if current else ""),
                model=attrs.get("model", current.model if current else ""),
            )
            if problems:
                raise serializers.ValidationError({"model": problems})
        return attrs

    def validate_inbox_ids(self, inboxes: list[Inbox]) -> list[Inbox]:
        taken = AssistantInbox.objects.filter(inbox__in=inboxes).select_related("assistant", "inbox")
        if self.instance is not None:
            taken = taken.exclude(assistant=self.instance)
        conflicts = [
            f"{link.inbox.name} (#{link.inbox_id}) is served by {link.assistant.name}" for link in taken
        ]
        if conflicts:
            raise serializers.ValidationError("; ".join(conflicts) + ". Disconnect it there first.")
        return list(dict.fromkeys(inboxes))


def _connect_inboxes(*, assistant: Assistant, inboxes: list[Inbox]) -> None:
    """Make the assistant serve exactly `inboxes`. The one-assistant-per-inbox constraint decides races."""
    wanted = {inbox.id for inbox in inboxes}
    AssistantInbox.objects.filter(assistant=assistant).exclude(inbox_id__in=wanted).delete()
    have = set(AssistantInbox.objects.filter(assistant=assistant).values_list("inbox_id", flat=True))
    try:
        with transaction.atomic():
            AssistantInbox.objects.bulk_create(
                [AssistantInbox(assistant=assistant, inbox_id=inbox_id) for inbox_id in sorted(wanted - have)]
            )
    except IntegrityError as exc:
        raise serializers.ValidationError(
            {"inbox_ids": ["An inbox is already served by another assistant."]}
        ) from exc


@transaction.atomic
def assistant_create(*, account_id: int, data: dict) -> Assistant:
    inboxes = data.pop("inbox_ids", [])
    assistant = Assistant.objects.create(account_id=account_id, **data)
    _connect_inboxes(assistant=assistant, inboxes=inboxes)
    routing_enable_default(assistant=assistant)
    return assistant


@transaction.atomic
def assistant_update(*, assistant: Assistant, data: dict) -> Assistant:
    inboxes = data.pop("inbox_ids", None)
    for name, value in data.items():
        setattr(assistant, name, value)
    if data:
        assistant.save(update_fields=list(data))
    if inboxes is not None:
        _connect_inboxes(assistant=assistant, inboxes=inboxes)
    return assistant


class AssistantCollectionApi(AccountAdminOrReadOnlyApi):
    """`GET` the account's assistants / `POST` a new one (administrators)."""

    pagination_class = Pagination
    InputSerializer = AssistantInputSerializer
    OutputSerializer = AssistantOutputSerializer

    @extend_schema(responses=OutputSerializer(many=True))
    def get(self, request: Request, account_id: int) -> Response:
        return paginated_response(
            request=request,
            view=self,
            queryset=assistant_list(account_id=self.account_id),
            serializer_class=self.OutputSerializer,
        )

    @extend_schema(request=InputSerializer, responses={201: OutputSerializer})
    def post(self, request: Request, account_id: int) -> Response:
        data = self.InputSerializer(data=request.data, context=self.serializer_context())
        data.is_valid(raise_exception=True)
        assistant = assistant_create(account_id=self.account_id, data=dict(data.validated_data))
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant.id)
        return Response(self.OutputSerializer(assistant).data, status=status.HTTP_201_CREATED)


class AssistantDetailApi(AccountAdminOrReadOnlyApi):
    """`GET`, `PUT`/`PATCH` (administrators), `DELETE` (administrators) one assistant."""

    InputSerializer = AssistantInputSerializer
    OutputSerializer = AssistantOutputSerializer

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request, account_id: int, assistant_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        return Response(self.OutputSerializer(assistant).data)

    def _update(self, request: Request, assistant_id: int, *, partial: bool) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        data = self.InputSerializer(
            assistant, data=request.data, partial=partial, context=self.serializer_context()
        )
        data.is_valid(raise_exception=True)
        assistant_update(assistant=assistant, data=dict(data.validated_data))
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        return Response(self.OutputSerializer(assistant).data)

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def put(self, request: Request, account_id: int, assistant_id: int) -> Response:
        return self._update(request, assistant_id, partial=False)

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def patch(self, request: Request, account_id: int, assistant_id: int) -> Response:
        return self._update(request, assistant_id, partial=True)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, account_id: int, assistant_id: int) -> Response:
        access_assistant(account_id=self.account_id, assistant_id=assistant_id).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)
