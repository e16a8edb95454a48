"""Conversations and their messages: one API class per operation, serializers nested in it.

Every lookup goes through `access_conversation(account_id=..., conversation_id=...)`, so an object of another
account answers 404 exactly like a missing one. Writes call `helpdesk.services` and nothing else.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.utils import timezone
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from helpdesk.ids import IdFilterField
from helpdesk.models import Attachment, Conversation, Message, Team
from helpdesk.selectors import access_conversation, account_members, conversation_list, conversation_messages
from helpdesk.selectors.whatsapp_templates import whatsapp_window_closed
from helpdesk.services.conversations import (
    conversation_add_label,
    conversation_assign,
    conversation_set_priority,
    conversation_set_status,
    conversation_set_team,
)
from helpdesk.services.messages import message_create_agent_reply, message_create_note
from helpdesk.services.reply_files import MAX_FILES, FileRefused

from .auth import AccountApi, Pagination, paginated_response
from .parsers import BoundedJSONParser

MAX_MESSAGE_CHARS = 10_000


class ContactSummarySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()

    class Meta:
        ref_name = "ContactSummary"


class ConversationOutputSerializer(serializers.ModelSerializer):
    labels = serializers.SlugRelatedField(many=True, read_only=True, slug_field="name")
    contact = ContactSummarySerializer()

    class Meta:
        model = Conversation
        ref_name = "Conversation"
        fields = [
            "id",
            "status",
            "priority",
            "labels",
            "inbox",
            "contact",
            "assignee",
            "team",
            "ai_agent_key",
            "waiting_since",
            "escalation_reason",
            "snoozed_until",
            "last_activity_at",
            "created_at",
        ]
        read_only_fields = fields


def conversation_response(conversation: Conversation, *, code: int = status.HTTP_200_OK) -> Response:
    return Response(ConversationOutputSerializer(conversation).data, status=code)


class ConversationListApi(AccountApi):
    """`GET accounts/<id>/conversations/?status=&inbox=`: the account's conversations, most recent first."""

    pagination_class = Pagination

    class FilterSerializer(serializers.Serializer):
        status = serializers.ChoiceField(choices=Conversation.Status.choices, required=False)
        inbox = IdFilterField()

        class Meta:
            ref_name = "ConversationListFilter"

    @extend_schema(parameters=[FilterSerializer], responses=ConversationOutputSerializer(many=True))
    def get(self, request: Request, account_id: int) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        conversations = conversation_list(
            account_id=self.account_id,
            user=request.user,
            status=filters.validated_data.get("status"),
            inbox_id=filters.validated_data.get("inbox"),
        )
        return paginated_response(
            request=request, view=self, queryset=conversations, serializer_class=ConversationOutputSerializer
        )


class ConversationDetailApi(AccountApi):
    """`GET accounts/<id>/conversations/<cid>/`."""

    @extend_schema(responses=ConversationOutputSerializer)
    def get(self, request: Request, account_id: int, conversation_id: int) -> Response:
        conversation = access_conversation(
            account_id=self.account_id, conversation_id=conversation_id, user=request.user
        )
        return conversation_response(conversation)


class MessageFileSerializer(serializers.ModelSerializer):
    """A file of a message: a customer's (fetched from the provider) or one a person attached."""

    class Meta:
        model = Attachment
        ref_name = "MessageFile"
        fields = ["id", "kind", "status", "file_name", "content_type", "size"]
        read_only_fields = fields


class MessageOutputSerializer(serializers.ModelSerializer):
    sender_name = serializers.SerializerMethodField()
    delivery_status = serializers.SerializerMethodField()
    files = MessageFileSerializer(many=True, read_only=True)

    class Meta:
        model = Message
        ref_name = "Message"
        fields = [
            "id",
            "message_type",
            "private",
            "content",
            "sender_type",
            "sender_name",
            "ai_agent_key",
            "ai_agent_name",
            "delivery_status",
            "files",
            "created_at",
        ]
        read_only_fields = fields

    def get_sender_name(self, message: Message) -> str:
        if message.sender_user is not None:
            return message.sender_user.get_full_name() or message.sender_user.get_username()
        if message.sender_contact is not None:
            return str(message.sender_contact)
        if message.sender_type == Message.SenderType.ASSISTANT:
            return message.ai_agent_name or "AI assistant"
        return message.get_sender_type_display()

    def get_delivery_status(self, message: Message) -> str:
        """The message's `Delivery` status (selected with the message); "none" for one never queued."""
        delivery = getattr(message, "delivery", None)
        return delivery.status if delivery is not None else "none"


@extend_schema_field({"type": "string", "format": "binary"})
class UploadField(serializers.FileField):
    """A file part of a multipart body (documented as binary: the schema's components are shared with answers,
    where drf-spectacular writes a file field as a URL)."""


WINDOW_CLOSED_API = (
    "The customer last wrote more than 24 hours ago, so WhatsApp delivers only an approved template now: "
    "send one with POST .../conversations/<id>/whatsapp-template/ (a private note is still possible)."
)


class ConversationMessagesApi(AccountApi):
    """`GET` the thread (oldest first, paginated) / `POST` a reply or a private note.

    A public reply goes through `message_create_agent_reply`: a conversation the AI was handling becomes
    `open` (people took over, the AI stays quiet) and delivery is queued after commit. A private note is never
    sent. Files go as multipart/form-data (`content`, `private`, and `files` once per file); each is checked
    against the channel's limits before anything is stored (helpdesk.services.reply_files), and a refused one
    is a 400 naming it, with nothing stored. JSON bodies carry no files.
    """

    # Multipart for the files, next to JSON; its fields are flat (no list or object for a form to drop).
    parser_classes = [BoundedJSONParser, MultiPartParser]
    pagination_class = Pagination

    class InputSerializer(serializers.Serializer):
        content = serializers.CharField(max_length=MAX_MESSAGE_CHARS)
        private = serializers.BooleanField(default=False)

        class Meta:
            ref_name = "MessageCreateInput"

    class FilesInputSerializer(serializers.Serializer):
        content = serializers.CharField(
            max_length=MAX_MESSAGE_CHARS,
            required=False,
            allow_blank=True,
            default="",
            help_text="The text; may be blank when files are attached.",
        )
        private = serializers.BooleanField(default=False)
        files = serializers.ListField(
            child=UploadField(allow_empty_file=True),
            required=False,
            default=list,
            max_length=MAX_FILES,
            help_text=f"Images, audio or PDF files, at most {MAX_FILES}; each no larger than the inbox's channel "
            "lets a bot send (Telegram 50 MB; WhatsApp images 5 MB, audio 16 MB, documents 100 MB; Slack, "
            "100 MB; the API channel, widget, e-mail and private notes 25 MB).",
        )

        class Meta:
            ref_name = "MessageCreateWithFilesInput"

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if not attrs["content"].strip() and not attrs["files"]:
                raise serializers.ValidationError({"content": ["Write a text or attach a file."]})
            return attrs

    @extend_schema(responses=MessageOutputSerializer(many=True))
    def get(self, request: Request, account_id: int, conversation_id: int) -> Response:
        conversation = access_conversation(
            account_id=self.account_id, conversation_id=conversation_id, user=request.user
        )
        return paginated_response(
            request=request,
            view=self,
            queryset=conversation_messages(conversation=conversation),
            serializer_class=MessageOutputSerializer,
        )

    @extend_schema(
        request={"application/json": InputSerializer, "multipart/form-data": FilesInputSerializer},
        responses={201: MessageOutputSerializer},
    )
    def post(self, request: Request, account_id: int, conversation_id: int) -> Response:
        conversation = access_conversation(
            account_id=self.account_id, conversation_id=conversation_id, user=request.user
        )
        multipart = request.content_type.startswith("multipart/")
        serializer = self.FilesInputSerializer if multipart else self.InputSerializer
        data = serializer(data=request.data)
        data.is_valid(raise_exception=True)
        content, user = data.validated_data["content"], request.user
        files = data.validated_data.get("files", [])
        if not data.validated_data["private"] and whatsapp_window_closed(conversation=conversation):
            # The provider would refuse it after the fact (WhatsApp's 131047): say so now, store nothing.
            raise serializers.ValidationError({"content": [WINDOW_CLOSED_API]})
        try:
            if data.validated_data["private"]:
                message = message_create_note(
                    conversation=conversation, content=content, user=user, files=files
                )
            else:
                message = message_create_agent_reply(
                    conversation=conversation, user=user, content=content, files=files
                )
        except FileRefused as exc:
            raise serializers.ValidationError({"files": [str(exc)]}) from exc
        return Response(MessageOutputSerializer(message).data, status=status.HTTP_201_CREATED)


class ConversationStatusApi(AccountApi):
    """`POST .../conversations/<cid>/status/ {status}`: `pending` hands the conversation back to the AI;
    `snoozed` with `snoozed_until` (a time in the future) hides it until then, or until the customer writes."""

    class InputSerializer(serializers.Serializer):
        status = serializers.ChoiceField(choices=Conversation.Status.choices)
        snoozed_until = serializers.DateTimeField(
            required=False,
            allow_null=True,
            help_text="With status `snoozed`: when the conversation opens again (ISO 8601, in the future).",
        )

        class Meta:
            ref_name = "ConversationStatusInput"

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            until = attrs.get("snoozed_until")
            if attrs["status"] == Conversation.Status.SNOOZED:
                if until is None:
                    raise serializers.ValidationError(
                        {"snoozed_until": "Say until when to snooze (a date and time in the future)."}
                    )
                if until <= timezone.now():
                    raise serializers.ValidationError(
                        {"snoozed_until": "The wake-up time has passed: choose a time in the future."}
                    )
            elif until is not None:
                raise serializers.ValidationError(
                    {"snoozed_until": "A wake-up time goes only with the status snoozed."}
                )
            return attrs

    @extend_schema(request=InputSerializer, responses=ConversationOutputSerializer)
    def post(self, request: Request, account_id: int, conversation_id: int) -> Response:
        conversation = access_conversation(
            account_id=self.account_id, conversation_id=conversation_id, user=request.user
        )
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        conversation = conversation_set_status(
            conversation=conversation,
            status=data.validated_data["status"],
            actor=request.user,
            snoozed_until=data.validated_data.get("snoozed_until"),
        )
        return conversation_response(conversation)


class ConversationLabelApi(AccountApi):
    """`POST .../conversations/<cid>/labels/ {label}`: add a label (created in the account if new)."""

    class InputSerializer(serializers.Serializer):
        # Not trimmed: the documented pattern (no spaces) is what is accepted.
        label = serializers.SlugField(
            max_length=64,
            allow_unicode=True,
            trim_whitespace=False,
            help_text="Letters and digits of any script, `_` and `-`.",
        )

        class Meta:
            ref_name = "ConversationLabelInput"

    @extend_schema(request=InputSerializer, responses=ConversationOutputSerializer)
    def post(self, request: Request, account_id: int, conversation_id: int) -> Response:
        conversation = access_conversation(
            account_id=self.account_id, conversation_id=conversation_id, user=request.user
        )
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        conversation_add_label(conversation=conversation, name=data.validated_data["label"], by=request.user)
        return conversation_response(conversation)


class ConversationPriorityApi(AccountApi):
    """`POST accounts/<id>/conversations/<cid>/priority/ {priority}`."""

    class InputSerializer(serializers.Serializer):
        priority = serializers.ChoiceField(choices=Conversation.Priority.choices)

        class Meta:
            ref_name = "ConversationPriorityInput"

    @extend_schema(request=InputSerializer, responses=ConversationOutputSerializer)
    def post(self, request: Request, account_id: int, conversation_id: int) -> Response:
        conversation = access_conversation(
            account_id=self.account_id, conversation_id=conversation_id, user=request.user
        )
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        conversation_set_priority(
            conversation=conversation, priority=data.validated_data["priority"], by=request.user
        )
        return conversation_response(conversation)


class ConversationAssigneeApi(AccountApi):
    """`POST .../conversations/<cid>/assignee/ {user_id | null}`: only members of the account qualify."""

    class InputSerializer(serializers.Serializer):
        user_id = serializers.PrimaryKeyRelatedField(
            queryset=get_user_model().objects.none(), allow_null=True
        )

        class Meta:
            ref_name = "ConversationAssigneeInput"

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # Scoped here, per request: a user of another account is "does not exist", not assignable.
            # Without an account in the context (schema generation) nobody qualifies.
            if "account_id" in self.context:
                self.fields["user_id"].queryset = account_members(account_id=self.context["account_id"])

    @extend_schema(request=InputSerializer, responses=ConversationOutputSerializer)
    def post(self, request: Request, account_id: int, conversation_id: int) -> Response:
        conversation = access_conversation(
            account_id=self.account_id, conversation_id=conversation_id, user=request.user
        )
        data = self.InputSerializer(data=request.data, context=self.serializer_context())
        data.is_valid(raise_exception=True)
        conversation_assign(
            conversation=conversation, assignee=data.validated_data["user_id"], by=request.user
        )
        return conversation_response(conversation)


class ConversationTeamApi(AccountApi):
    """`POST .../conversations/<cid>/team/ {team_id | null}`: only the account's teams qualify."""

    class InputSerializer(serializers.Serializer):
        team_id = serializers.PrimaryKeyRelatedField(queryset=Team.objects.none(), allow_null=True)

        class Meta:
            ref_name = "ConversationTeamInput"

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # Scoped per request: another account's team "does not exist". Without an account (schema
            # generation) no team qualifies.
            if "account_id" in self.context:
                self.fields["team_id"].queryset = Team.objects.filter(account_id=self.context["account_id"])

    @extend_schema(request=InputSerializer, responses=ConversationOutputSerializer)
    def post(self, request: Request, account_id: int, conversation_id: int) -> Response:
        conversation = access_conversation(
            account_id=self.account_id, conversation_id=conversation_id, user=request.user
        )
        data = self.InputSerializer(data=request.data, context=self.serializer_context())
        data.is_valid(raise_exception=True)
        conversation_set_team(conversation=conversation, team=data.validated_data["team_id"], by=request.user)
        return conversation_response(conversation)
