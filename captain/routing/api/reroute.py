"""`POST accounts/<id>/conversations/<cid>/reroute/ {"key": "refunds"}`: a person says the conversation should have
gone to another node (triage `assistant`, an enabled scenario's key, or `human` for people). The same action as
the conversation page's "This should have gone to ..." form (captain.routing.services.routing_corrections):

- the last customer message the router decided about is proposed as a routing example for that node (a
  correction, pending an administrator's review), unless the router already sent it there;
- the conversation moves: the AI continues at that node with the next customer message (a conversation people
  handle is handed back to the AI there), or `human` hands it to people as the AI's own handoff does.

Any member of the account may do it, like the conversation's other actions; another account's conversation is
404, an unknown key 400 naming the valid ones.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from captain.routing.api.routing_examples import correction_signal_field
from captain.routing.models import RoutingExample
from captain.routing.services.routing_corrections import RerouteRefused, conversation_reroute
from helpdesk.api.auth import AccountApi
from helpdesk.selectors import access_conversation


class CorrectionOutputSerializer(serializers.ModelSerializer):
    signal = correction_signal_field()

    class Meta:
        model = RoutingExample
        ref_name = "RoutingCorrection"
        fields = ["id", "key", "text", "status", "signal", "routed_to", "message", "created_at"]
        read_only_fields = fields


class ConversationRerouteApi(AccountApi):
    """Re-route a conversation to another node and learn from it (see the module docstring)."""

    class InputSerializer(serializers.Serializer):
        key = serializers.CharField(max_length=64)

        class Meta:
            ref_name = "ConversationRerouteInput"

    class OutputSerializer(serializers.Serializer):
        conversation = serializers.IntegerField()
        key = serializers.CharField()
        moved = serializers.BooleanField(help_text="False: only the correction was recorded.")
        status = serializers.CharField(help_text="The conversation's status afterwards.")
        node = serializers.CharField(help_text="The AI node in charge now ('' when people have it).")
        correction = CorrectionOutputSerializer(allow_null=True)

        class Meta:
            ref_name = "ConversationRerouteOutput"

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def post(self, request: Request, account_id: int, conversation_id: int) -> Response:
        conversation = access_conversation(
            account_id=self.account_id, conversation_id=conversation_id, user=request.user
        )
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            done = conversation_reroute(
                conversation=conversation, key=data.validated_data["key"], user=request.user
            )
        except RerouteRefused as exc:
            raise serializers.ValidationError({"key": [str(exc)], "valid_keys": exc.valid_keys}) from exc
        conversation.refresh_from_db(fields=["status", "ai_agent_key"])
        return Response(
            self.OutputSerializer(
                {
                    "conversation": conversation.pk,
                    "key": done.key,
                    "moved": done.moved,
                    "status": done.status,
                    "node": conversation.ai_agent_key,
                    "correction": done.correction,
                }
            ).data
        )
