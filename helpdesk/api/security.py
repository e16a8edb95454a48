"""Sign-in security over the REST API (administrators): `accounts/<id>/security/` reads whether the account
requires two-factor sign-in and each member's state, and PATCH turns the requirement on or off;
`accounts/<id>/security/members/<user_id>/sign-ins/` is a member's sign-in history. API tokens themselves are
never asked for a code (docs/team.md)."""

from __future__ import annotations

from django.http import Http404
from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

import helpdesk.ids  # noqa: F401  (registers the <id:...> path converter used below)
from helpdesk.models import SignInEvent
from helpdesk.selectors.sign_ins import account_member_for_history, member_security, sign_ins_for
from helpdesk.services.two_factor import TwoFactorError, account_two_factor_set

from .auth import AccountAdminApi


class MemberSecuritySerializer(serializers.Serializer):
    user_id = serializers.IntegerField(source="membership.user_id")
    username = serializers.CharField(source="membership.user.username")
    role = serializers.CharField(source="membership.role")
    two_factor = serializers.BooleanField()
    last_sign_in = serializers.DateTimeField(allow_null=True)

    class Meta:
        ref_name = "MemberSecurity"


class AccountSecuritySerializer(serializers.Serializer):
    require_two_factor = serializers.BooleanField()
    members = MemberSecuritySerializer(many=True, read_only=True)

    class Meta:
        ref_name = "AccountSecurity"


class SecurityInputSerializer(serializers.Serializer):
    # Optional like every PATCH field: `{}` changes nothing and answers the current state.
    require_two_factor = serializers.BooleanField(required=False)

    class Meta:
        ref_name = "AccountSecurityInput"


class SignInEventSerializer(serializers.ModelSerializer):
    class Meta:
        model = SignInEvent
        ref_name = "SignInEvent"
        fields = ["id", "username", "outcome", "ip_address", "user_agent", "created_at"]
        read_only_fields = fields


class AccountSecurityApi(AccountAdminApi):
    def _state(self) -> Response:
        account = self.membership.account
        data = {
            "require_two_factor": account.require_two_factor,
            "members": member_security(account_id=account.pk),
        }
        return Response(AccountSecuritySerializer(data).data)

    @extend_schema(responses=AccountSecuritySerializer)
    def get(self, request: Request, account_id: int) -> Response:
        return self._state()

    @extend_schema(request=SecurityInputSerializer, responses=AccountSecuritySerializer)
    def patch(self, request: Request, account_id: int) -> Response:
        data = SecurityInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        if "require_two_factor" not in data.validated_data:
            return self._state()
        try:
            account_two_factor_set(
                account=self.membership.account,
                required=data.validated_data["require_two_factor"],
                by_user=request.user,
            )
        except TwoFactorError as refused:
            raise serializers.ValidationError({"require_two_factor": [str(refused)]}) from refused
        return self._state()


class MemberSignInsApi(AccountAdminApi):
    @extend_schema(responses=SignInEventSerializer(many=True))
    def get(self, request: Request, account_id: int, user_id: int) -> Response:
        if account_member_for_history(account_id=self.account_id, user_id=user_id) is None:
            raise Http404("No such member.")
        return Response(SignInEventSerializer(sign_ins_for(user_id=user_id), many=True).data)


urlpatterns = [
    path("accounts/<id:account_id>/security/", AccountSecurityApi.as_view(), name="account-security"),
    path(
        "accounts/<id:account_id>/security/members/<id:user_id>/sign-ins/",
        MemberSignInsApi.as_view(),
        name="member-sign-ins",
    ),
]
