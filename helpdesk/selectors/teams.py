"""Reads about teams; `access_team` fetches and authorizes in one call (another account's team is a 404)."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet
from django.http import Http404

from helpdesk.models import Team, TeamMember


def _with_members(teams: QuerySet[Team]) -> QuerySet[Team]:
    return teams.prefetch_related(
        Prefetch("team_members", queryset=TeamMember.objects.select_related("user").order_by("user_id"))
    )


def account_teams(*, account_id: int) -> QuerySet[Team]:
    """The account's teams by name, each with its members (two queries whatever the number of teams)."""
    return _with_members(Team.objects.filter(account_id=account_id).order_by("name", "id"))


def access_team(*, account_id: int, team_id: int) -> Team:
    team = _with_members(Team.objects.filter(account_id=account_id, pk=team_id)).first()
    if team is None:
        raise Http404("No such team.")
    return team


def account_team(*, account_id: int, team_id: int) -> Team | None:
    """One of the account's teams (without its members), or None: another account's team is not found."""
    return Team.objects.filter(account_id=account_id, pk=team_id).first()


def account_team_choices(*, account_id: int) -> QuerySet[Team]:
    """The account's teams by name, id and name only (a choice list: one query)."""
    return Team.objects.filter(account_id=account_id).order_by("name", "id").only("id", "name")
