"""Invitations over the REST API (administrators of the account; agents 403, another account 404):
`accounts/<id>/invitations/` lists the account's invitations with their state and invites an address (the mail
with the one-time link goes to it; the token is never in an answer), `accounts/<id>/invitations/<id>/` DELETE
withdraws one (its link stops working; one already used or withdrawn: 400). helpdesk.services.invitations holds the rules."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.urls import path
from django.utils import timezone
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response

import helpdesk.ids  # noqa: F401  (registers the <id:...> path converter used below)
from helpdesk.models import Invitation, Membership
from helpdesk.selectors.invitations import account_invitations
from helpdesk.services.invitations import InvitationError, invitation_create, invitation_revoke

from .auth import AccountAdminApi, Pagination, paginated_response
from .schema import REFUSES_400

ACCOUNT = "accounts/<id:account_id>/"


class InvitationSerializer(serializers.ModelSerializer):
    state = serializers.SerializerMethodField()

    class Meta:
        model = Invitation
        ref_name = "Invitation"
        fields = [
            "id",
            "email",
            "role",
            "state",
            "invited_by",
            "created_at",
            "expires_at",
            "accepted_at",
            "accepted_by",
            "revoked_at",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.ChoiceField(choices=Invitation.State.choices))
    def get_state(self, invitation: Invitation) -> str:
        return invitation.state(timezone.now())


class InvitationInputSerializer(serializers.Serializer):
    email = serializers.EmailField(max_length=254)
    role = serializers.ChoiceField(choices=Membership.Role.choices, default=Membership.Role.AGENT)

    class Meta:
        ref_name = "InvitationInput"


class InvitationCollectionApi(AccountAdminApi):
    pagination_class = Pagination

    @extend_schema(responses=InvitationSerializer(many=True))
    def get(self, request: Request, account_id: int) -> Response:
        invitations = account_invitations(account_id=self.account_id)
        return paginated_response(
            request=request, view=self, queryset=invitations, serializer_class=InvitationSerializer
        )

    @extend_schema(request=InvitationInputSerializer, responses={201: InvitationSerializer})
    def post(self, request: Request, account_id: int) -> Response:
        data = InvitationInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            invitation = invitation_create(
                account_id=self.account_id,
                email=data.validated_data["email"],
                role=data.validated_data["role"],
                invited_by=request.user,
            )
        except InvitationError as exc:  # already a member, or invited by someone else at the same moment
            raise serializers.ValidationError({"email": [exc.message]}) from exc
        except ValidationError as exc:
            raise serializers.ValidationError({"non_field_errors": exc.messages}) from exc
        return Response(InvitationSerializer(invitation).data, status=status.HTTP_201_CREATED)


class InvitationDetailApi(AccountAdminApi):
    @extend_schema(
        responses={204: None, **REFUSES_400},
        description="Withdraw a pending invitation: its link stops working. 400 when it was already used or "
        "withdrawn.",
    )
    def delete(self, request: Request, account_id: int, invitation_id: int) -> Response:
        try:
            invitation_revoke(
                account_id=self.account_id, invitation_id=invitation_id, revoked_by=request.user
            )
        except InvitationError as exc:
            if exc.code == "unknown":
                raise NotFound(exc.message) from exc
            raise serializers.ValidationError({"non_field_errors": [exc.message]}) from exc
        return Response(status=status.HTTP_204_NO_CONTENT)


urlpatterns = [
    path(f"{ACCOUNT}invitations/", InvitationCollectionApi.as_view(), name="invitation-list"),
    path(
        f"{ACCOUNT}invitations/<id:invitation_id>/", InvitationDetailApi.as_view(), name="invitation-detail"
    ),
]
