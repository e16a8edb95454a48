"""Teams and one's own availability over the REST API.

- `accounts/<id>/teams/`: `GET` the account's teams with their members (any member); `POST` a team
  (`name`, `description`, `auto_assign`, `members`: user ids) - administrators only.
- `accounts/<id>/teams/<tid>/`: `GET`; `PATCH` any of those fields (`members` replaces the list) -
  administrators only.
- `accounts/<id>/availability/`: `GET` / `PATCH {"availability": "online" | "busy" | "offline"}` the caller's
  own availability in the account (only online people get conversations assigned automatically).

Members must be people of the account (400 naming the refused ids); another account's team answers 404.
"""

from __future__ import annotations

from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

import helpdesk.ids  # noqa: F401  (registers the <id:...> path converter used below)
from helpdesk.models import Membership, Team
from helpdesk.selectors.teams import access_team, account_teams
from helpdesk.services.teams import MAX_TEAM_MEMBERS, membership_set_availability, team_create, team_update

from .attributes import service_errors_as_400
from .auth import AccountAdminOrReadOnlyApi, AccountApi

ACCOUNT = "accounts/<id:account_id>/"


class TeamMemberSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="user_id")
    username = serializers.CharField(source="user.username")
    last_assigned_at = serializers.DateTimeField(allow_null=True, help_text="null: never assigned yet.")

    class Meta:
        ref_name = "TeamMember"


class TeamOutputSerializer(serializers.ModelSerializer):
    members = TeamMemberSerializer(source="team_members", many=True)

    class Meta:
        model = Team
        ref_name = "Team"
        fields = ["id", "name", "description", "auto_assign", "members", "created_at"]
        read_only_fields = fields


class TeamInputSerializer(serializers.Serializer):
    """The shape of a write; the rules (members of the account, unique name) are the service's."""

    name = serializers.CharField(max_length=100)
    description = serializers.CharField(max_length=2000, required=False, allow_blank=True)
    auto_assign = serializers.BooleanField(required=False)
    members = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**31 - 1),
        max_length=MAX_TEAM_MEMBERS,
        required=False,
    )

    class Meta:
        ref_name = "TeamInput"


def team_response(*, account_id: int, team_id: int, code: int = status.HTTP_200_OK) -> Response:
    team = access_team(account_id=account_id, team_id=team_id)
    return Response(TeamOutputSerializer(team).data, status=code)


class TeamCollectionApi(AccountAdminOrReadOnlyApi):
    @extend_schema(responses=TeamOutputSerializer(many=True))
    def get(self, request: Request, account_id: int) -> Response:
        return Response(TeamOutputSerializer(account_teams(account_id=self.account_id), many=True).data)

    @extend_schema(request=TeamInputSerializer, responses={201: TeamOutputSerializer})
    def post(self, request: Request, account_id: int) -> Response:
        data = TeamInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        with service_errors_as_400():
            team = team_create(
                account_id=self.account_id,
                name=values["name"],
                description=values.get("description", ""),
                auto_assign=values.get("auto_assign", True),
                member_ids=values.get("members", []),
            )
        return team_response(account_id=self.account_id, team_id=team.pk, code=status.HTTP_201_CREATED)


class TeamDetailApi(AccountAdminOrReadOnlyApi):
    @extend_schema(responses=TeamOutputSerializer)
    def get(self, request: Request, account_id: int, team_id: int) -> Response:
        return team_response(account_id=self.account_id, team_id=team_id)

    @extend_schema(request=TeamInputSerializer(partial=True), responses=TeamOutputSerializer)
    def patch(self, request: Request, account_id: int, team_id: int) -> Response:
        team = access_team(account_id=self.account_id, team_id=team_id)
        data = TeamInputSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        with service_errors_as_400():
            team_update(
                team=team,
                name=values.get("name"),
                description=values.get("description"),
                auto_assign=values.get("auto_assign"),
                member_ids=values.get("members"),
            )
        return team_response(account_id=self.account_id, team_id=team.pk)


class AvailabilitySerializer(serializers.Serializer):
    availability = serializers.ChoiceField(choices=Membership.Availability.choices)
    max_open_assignments = serializers.IntegerField(read_only=True, allow_null=True)

    class Meta:
        ref_name = "Availability"


class MyAvailabilityApi(AccountApi):
    """The caller's own availability in the account (nobody sets another person's)."""

    @extend_schema(responses=AvailabilitySerializer)
    def get(self, request: Request, account_id: int) -> Response:
        return Response(AvailabilitySerializer(self.membership).data)

    def _write(self, request: Request, *, partial: bool) -> Response:
        data = AvailabilitySerializer(data=request.data, partial=partial)
        data.is_valid(raise_exception=True)
        if "availability" in data.validated_data:  # a PATCH of `{}` changes nothing
            membership_set_availability(
                membership=self.membership, availability=data.validated_data["availability"]
            )
        return Response(AvailabilitySerializer(self.membership).data)

    @extend_schema(request=AvailabilitySerializer, responses=AvailabilitySerializer)
    def patch(self, request: Request, account_id: int) -> Response:
        return self._write(request, partial=True)

    @extend_schema(request=AvailabilitySerializer, responses=AvailabilitySerializer)
    def put(self, request: Request, account_id: int) -> Response:
        return self._write(request, partial=False)


urlpatterns = [
    path(f"{ACCOUNT}teams/", TeamCollectionApi.as_view(), name="team-list"),
    path(f"{ACCOUNT}teams/<id:team_id>/", TeamDetailApi.as_view(), name="team-detail"),
    path(f"{ACCOUNT}availability/", MyAvailabilityApi.as_view(), name="my-availability"),
]
