"""WhatsApp templates over the REST API.

- `accounts/<id>/inboxes/<inbox_id>/whatsapp-templates/`: `GET` the inbox's templates (any member let into the
  inbox; `?limit=&offset=` pages). Only `approved` ones can be sent.
- `accounts/<id>/conversations/<cid>/whatsapp-template/`: `POST {"template_id", "variables": [...]}` sends one
  as a person's reply (the only message Meta delivers once the 24-hour window is closed); the answer is the
  stored message, whose content is the filled body.
"""

from __future__ import annotations

from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

import helpdesk.ids  # noqa: F401  (registers the <id:...> path converter used below)
from helpdesk.models import WhatsAppTemplate
from helpdesk.selectors.conversations import dashboard_conversation
from helpdesk.selectors.whatsapp_templates import inbox_templates, template_for
from helpdesk.services.whatsapp_templates import VALUE_LIMIT, TemplateRefused, whatsapp_template_send

from .auth import AccountApi, Pagination, paginated_response
from .conversations import MessageOutputSerializer


class WhatsAppTemplateSerializer(serializers.ModelSerializer):
    class Meta:
        model = WhatsAppTemplate
        ref_name = "WhatsAppTemplate"
        fields = ["id", "name", "language", "category", "status", "header_text", "body", "variables"]
        read_only_fields = fields


class TemplateSendSerializer(serializers.Serializer):
    template_id = serializers.IntegerField(min_value=1, max_value=2**63 - 1)
    variables = serializers.ListField(
        child=serializers.CharField(max_length=VALUE_LIMIT),
        max_length=100,
        default=list,
        help_text="The values of {{1}}..{{n}}, in order.",
    )

    class Meta:
        ref_name = "WhatsAppTemplateSend"


class InboxTemplatesApi(AccountApi):
    """`GET` an inbox's WhatsApp templates."""

    pagination_class = Pagination

    @extend_schema(responses=WhatsAppTemplateSerializer(many=True))
    def get(self, request: Request, account_id: int, inbox_id: int) -> Response:
        return paginated_response(
            request=request,
            view=self,
            queryset=inbox_templates(account_id=self.account_id, inbox_id=inbox_id, user=request.user),
            serializer_class=WhatsAppTemplateSerializer,
        )


class ConversationTemplateSendApi(AccountApi):
    """`POST` a WhatsApp template on the conversation, as the person's reply."""

    @extend_schema(request=TemplateSendSerializer, responses={201: MessageOutputSerializer})
    def post(self, request: Request, account_id: int, conversation_id: int) -> Response:
        conversation = dashboard_conversation(
            account_id=self.account_id, conversation_id=conversation_id, user=request.user
        )
        data = TemplateSendSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        template = template_for(
            inbox_id=conversation.inbox_id, template_id=data.validated_data["template_id"]
        )
        try:
            message = whatsapp_template_send(
                conversation=conversation,
                template=template,
                variables=data.validated_data["variables"],
                by=request.user,
            )
        except TemplateRefused as exc:
            raise serializers.ValidationError({"variables": [str(exc)]}) from exc
        return Response(MessageOutputSerializer(message).data, status=status.HTTP_201_CREATED)


urlpatterns = [
    path(
        "accounts/<id:account_id>/inboxes/<id:inbox_id>/whatsapp-templates/",
        InboxTemplatesApi.as_view(),
        name="inbox-whatsapp-templates",
    ),
    path(
        "accounts/<id:account_id>/conversations/<id:conversation_id>/whatsapp-template/",
        ConversationTemplateSendApi.as_view(),
        name="conversation-whatsapp-template",
    ),
]
