"""SLA policies over the REST API (administrators): `accounts/<id>/sla-policies/` lists the account's policies and
makes one; an inbox names its policy in the admin (helpdesk/selectors/sla.py says how each target is counted)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import IntegrityError
from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

import helpdesk.ids  # noqa: F401  (registers the <id:...> path converter used below)
from helpdesk.models import SlaPolicy
from helpdesk.selectors.sla import account_sla_policies
from helpdesk.services.sla import sla_policy_create

from .auth import AccountAdminApi, Pagination, paginated_response

MINUTES = {"min_value": 1, "max_value": 525_600, "required": False, "allow_null": True}


class SlaPolicySerializer(serializers.ModelSerializer):
    class Meta:
        model = SlaPolicy
        ref_name = "SlaPolicy"
        fields = [
            "id",
            "name",
            "first_response_minutes",
            "next_response_minutes",
            "resolution_minutes",
            "business_hours_only",
            "created_at",
        ]
        read_only_fields = fields


class SlaPolicyInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    first_response_minutes = serializers.IntegerField(**MINUTES)
    next_response_minutes = serializers.IntegerField(**MINUTES)
    resolution_minutes = serializers.IntegerField(**MINUTES)
    business_hours_only = serializers.BooleanField(default=True)

    class Meta:
        ref_name = "SlaPolicyInput"


class SlaPolicyCollectionApi(AccountAdminApi):
    pagination_class = Pagination

    @extend_schema(responses=SlaPolicySerializer(many=True))
    def get(self, request: Request, account_id: int) -> Response:
        policies = account_sla_policies(account_id=self.account_id)
        return paginated_response(
            request=request, view=self, queryset=policies, serializer_class=SlaPolicySerializer
        )

    @extend_schema(request=SlaPolicyInputSerializer, responses={201: SlaPolicySerializer})
    def post(self, request: Request, account_id: int) -> Response:
        data = SlaPolicyInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            policy = sla_policy_create(account_id=self.account_id, **data.validated_data)
        except ValidationError as exc:
            raise serializers.ValidationError({"non_field_errors": exc.messages}) from exc
        except IntegrityError as exc:
            raise serializers.ValidationError(
                {"name": ["There is already a policy with this name."]}
            ) from exc
        return Response(SlaPolicySerializer(policy).data, status=status.HTTP_201_CREATED)


urlpatterns = [
    path("accounts/<id:account_id>/sla-policies/", SlaPolicyCollectionApi.as_view(), name="sla-policy-list"),
]
