"""Macros and automation rules over the REST API.

- `accounts/<id>/macros/`: `GET` the macros the person may run (the account's and their own personal ones);
  `POST` one (`personal: true` is the person's own; the account's are for administrators).
- `accounts/<id>/macros/<macro_id>/run/`: `POST {"conversation_ids": [...]}` runs it on those the person sees
  (at most 1,000), through the same services as the dashboard; the answer says what was done and what failed.
- `accounts/<id>/automation-rules/` (administrators): `GET` the rules, `POST` one;
  `accounts/<id>/automation-rules/<rule_id>/`: `GET`, `PATCH` (any of the fields; `{}` changes nothing), `DELETE`.
- `accounts/<id>/conversations/<cid>/automation-runs/`: `GET` the rule runs recorded on a conversation.
"""

from __future__ import annotations

from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response

import helpdesk.ids  # noqa: F401  (registers the <id:...> path converter used below)
from helpdesk.models import AutomationEvent, AutomationRule, AutomationRun, Macro, Membership
from helpdesk.selectors.automation import (
    account_automation_rule,
    account_automation_rules,
    conversation_automation_runs,
)
from helpdesk.selectors.conversations import dashboard_conversation
from helpdesk.selectors.macros import macro_for, macros_for
from helpdesk.services.automation_rules import (
    automation_rule_create,
    automation_rule_delete,
    automation_rule_update,
)
from helpdesk.services.bulk import BULK_LIMIT, BulkTooLarge
from helpdesk.services.macros import macro_create, macro_run

from .attributes import service_errors_as_400
from .auth import AccountAdminApi, AccountApi, Pagination, paginated_response

ACTIONS_HELP = 'In order, e.g. [{"kind": "add_label", "value": "refund"}, {"kind": "resolve"}].'


class MacroSerializer(serializers.ModelSerializer):
    class Meta:
        model = Macro
        ref_name = "Macro"
        fields = ["id", "name", "visibility", "owner", "actions", "created_at", "updated_at"]
        read_only_fields = fields


class MacroInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    actions = serializers.JSONField(help_text=ACTIONS_HELP)
    personal = serializers.BooleanField(
        default=True, help_text="Only you see it; false: the account's (admins)."
    )

    class Meta:
        ref_name = "MacroInput"


class MacroRunSerializer(serializers.Serializer):
    conversation_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**63 - 1),
        max_length=BULK_LIMIT,
        allow_empty=False,
    )

    class Meta:
        ref_name = "MacroRun"


class MacroRunResultSerializer(serializers.Serializer):
    conversations = serializers.IntegerField()
    not_found = serializers.IntegerField()
    done = serializers.IntegerField()
    failed_count = serializers.IntegerField()
    failed = serializers.ListField(child=serializers.CharField())

    class Meta:
        ref_name = "MacroRunResult"


class RuleSerializer(serializers.ModelSerializer):
    class Meta:
        model = AutomationRule
        ref_name = "AutomationRule"
        fields = ["id", "name", "active", "event", "conditions", "actions", "created_at", "updated_at"]
        read_only_fields = fields


class RuleInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    event = serializers.ChoiceField(choices=AutomationEvent.choices)
    conditions = serializers.JSONField(
        required=False, default=dict, help_text='e.g. {"text_contains": "refund"}'
    )
    actions = serializers.JSONField(help_text=ACTIONS_HELP)
    active = serializers.BooleanField(default=True)

    class Meta:
        ref_name = "AutomationRuleInput"


class RuleUpdateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100, required=False)
    event = serializers.ChoiceField(choices=AutomationEvent.choices, required=False)
    conditions = serializers.JSONField(required=False, help_text='e.g. {"text_contains": "refund"}')
    actions = serializers.JSONField(required=False, help_text=ACTIONS_HELP)
    active = serializers.BooleanField(required=False)

    class Meta:
        ref_name = "AutomationRuleUpdate"


class RunSerializer(serializers.ModelSerializer):
    class Meta:
        model = AutomationRun
        ref_name = "AutomationRun"
        fields = ["id", "rule", "rule_name", "event", "actions_done", "error", "created_at"]
        read_only_fields = fields


class MacroCollectionApi(AccountApi):
    pagination_class = Pagination

    @extend_schema(responses=MacroSerializer(many=True))
    def get(self, request: Request, account_id: int) -> Response:
        macros = macros_for(account_id=self.account_id, user=request.user)
        return paginated_response(
            request=request, view=self, queryset=macros, serializer_class=MacroSerializer
        )

    @extend_schema(request=MacroInputSerializer, responses={201: MacroSerializer})
    def post(self, request: Request, account_id: int) -> Response:
        data = MacroInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        personal = data.validated_data["personal"]
        if not personal and self.membership.role != Membership.Role.ADMIN:
            raise PermissionDenied("Only the account's administrators make macros for everyone.")
        with service_errors_as_400():
            macro = macro_create(
                account_id=self.account_id,
                name=data.validated_data["name"],
                actions=data.validated_data["actions"],
                owner=request.user,
                personal=personal,
            )
        return Response(MacroSerializer(macro).data, status=status.HTTP_201_CREATED)


class MacroRunApi(AccountApi):
    @extend_schema(request=MacroRunSerializer, responses=MacroRunResultSerializer)
    def post(self, request: Request, account_id: int, macro_id: int) -> Response:
        macro = macro_for(account_id=self.account_id, user=request.user, macro_id=macro_id)
        if macro is None:
            raise NotFound("No such macro.")
        data = MacroRunSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            result = macro_run(
                macro=macro, conversation_ids=data.validated_data["conversation_ids"], actor=request.user
            )
        except BulkTooLarge as exc:
            raise serializers.ValidationError({"conversation_ids": [str(exc)]}) from exc
        return Response(MacroRunResultSerializer(result).data)


class RuleCollectionApi(AccountAdminApi):
    pagination_class = Pagination

    @extend_schema(responses=RuleSerializer(many=True))
    def get(self, request: Request, account_id: int) -> Response:
        rules = account_automation_rules(account_id=self.account_id)
        return paginated_response(request=request, view=self, queryset=rules, serializer_class=RuleSerializer)

    @extend_schema(request=RuleInputSerializer, responses={201: RuleSerializer})
    def post(self, request: Request, account_id: int) -> Response:
        data = RuleInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        with service_errors_as_400():
            rule = automation_rule_create(account_id=self.account_id, **data.validated_data)
        return Response(RuleSerializer(rule).data, status=status.HTTP_201_CREATED)


class RuleDetailApi(AccountAdminApi):
    def rule(self, rule_id: int) -> AutomationRule:
        rule = account_automation_rule(account_id=self.account_id, rule_id=rule_id)
        if rule is None:
            raise NotFound("No such rule.")
        return rule

    @extend_schema(responses=RuleSerializer)
    def get(self, request: Request, account_id: int, rule_id: int) -> Response:
        return Response(RuleSerializer(self.rule(rule_id)).data)

    @extend_schema(request=RuleUpdateSerializer, responses=RuleSerializer)
    def patch(self, request: Request, account_id: int, rule_id: int) -> Response:
        rule = self.rule(rule_id)
        data = RuleUpdateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        with service_errors_as_400():
            rule = automation_rule_update(rule=rule, **data.validated_data)
        return Response(RuleSerializer(rule).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, account_id: int, rule_id: int) -> Response:
        automation_rule_delete(rule=self.rule(rule_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class ConversationRunsApi(AccountApi):
    pagination_class = Pagination

    @extend_schema(responses=RunSerializer(many=True))
    def get(self, request: Request, account_id: int, conversation_id: int) -> Response:
        # 404 for a conversation the person does not see, like every conversation route.
        dashboard_conversation(account_id=self.account_id, conversation_id=conversation_id, user=request.user)
        runs = conversation_automation_runs(account_id=self.account_id, conversation_id=conversation_id)
        return paginated_response(request=request, view=self, queryset=runs, serializer_class=RunSerializer)


urlpatterns = [
    path("accounts/<id:account_id>/macros/", MacroCollectionApi.as_view(), name="macro-list"),
    path("accounts/<id:account_id>/macros/<id:macro_id>/run/", MacroRunApi.as_view(), name="macro-run"),
    path(
        "accounts/<id:account_id>/automation-rules/", RuleCollectionApi.as_view(), name="automation-rule-list"
    ),
    path(
        "accounts/<id:account_id>/automation-rules/<id:rule_id>/",
        RuleDetailApi.as_view(),
        name="automation-rule-detail",
    ),
    path(
        "accounts/<id:account_id>/conversations/<id:conversation_id>/automation-runs/",
        ConversationRunsApi.as_view(),
        name="conversation-automation-runs",
    ),
]
