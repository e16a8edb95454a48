"""Credit usage: `GET accounts/<id>/credits/` (administrators of the account, like the dashboard's usage page:
credits are billing, not part of an agent's work)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from captain.answering.selectors import CREDIT_USAGE_DAYS, credit_usage
from helpdesk.api.auth import AccountAdminApi


class CreditUsageApi(AccountAdminApi):
    """The balance and the last 30 days of the ledger per day, assistant and agent (refunds negative)."""

    class OutputSerializer(serializers.Serializer):
        class DaySerializer(serializers.Serializer):
            date = serializers.DateField()
            credits = serializers.IntegerField()

            class Meta:
                ref_name = "CreditUsageDay"

        class AssistantUsageSerializer(serializers.Serializer):
            assistant_id = serializers.IntegerField(allow_null=True)
            assistant_name = serializers.CharField()
            credits = serializers.IntegerField()

            class Meta:
                ref_name = "CreditUsageAssistant"

        class AgentUsageSerializer(serializers.Serializer):
            agent_key = serializers.CharField()
            credits = serializers.IntegerField()

            class Meta:
                ref_name = "CreditUsageAgent"

        limit = serializers.IntegerField()
        used = serializers.IntegerField()
        remaining = serializers.IntegerField()
        since = serializers.DateField(
            help_text=f"First day covered by the breakdowns ({CREDIT_USAGE_DAYS} days)."
        )
        by_day = DaySerializer(many=True)
        by_assistant = AssistantUsageSerializer(many=True)
        by_agent_key = AgentUsageSerializer(many=True)

        class Meta:
            ref_name = "CreditUsage"

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request, account_id: int) -> Response:
        return Response(self.OutputSerializer(credit_usage(account_id=self.account_id)).data)
