"""Teams and availability: the account's groups of people who pick up escalations (helpdesk.models.team), and
each person's own online / busy / offline switch that automatic assignment reads (helpdesk.services.assignment).

Rules live here, not in the API: a team's members must be people of the team's account, and a team name is
unique in its account. Both raise `ValidationError({field: [message]})` so every caller answers the same way.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.core.exceptions import ValidationError
from django.db import transaction

from helpdesk.models import Membership, Team, TeamMember
from helpdesk.services.audit import audit_rows_created

from .assignment import assign_waiting

MAX_TEAM_MEMBERS = 500


def _check_members(*, account_id: int, user_ids: Iterable[int]) -> list[int]:
    """The distinct ids, all of them people of the account; anybody else is refused by id (never silently
    dropped, and never a way to learn who is in another account: the message is the same for a missing user)."""
    ids = list(dict.fromkeys(user_ids))
    if len(ids) > MAX_TEAM_MEMBERS:
        raise ValidationError({"members": [f"A team has at most {MAX_TEAM_MEMBERS} members."]})
    known = set(
        Membership.objects.filter(account_id=account_id, user_id__in=ids).values_list("user_id", flat=True)
    )
    unknown = [i for i in ids if i not in known]
    if unknown:
        listed = ", ".join(str(i) for i in unknown)
        raise ValidationError({"members": [f"Not people of this account: {listed}."]})
    return ids


def _check_name(*, account_id: int, name: str, team_id: int | None = None) -> str:
    name = name.strip()
    if not name:
        raise ValidationError({"name": ["A team needs a name."]})
    clash = Team.objects.filter(account_id=account_id, name__iexact=name)
    if team_id is not None:
        clash = clash.exclude(pk=team_id)
    if clash.exists():
        raise ValidationError({"name": [f"This account already has a team called {name!r}."]})
    return name


def _set_members(*, team: Team, user_ids: list[int]) -> None:
    """Keep the members who stay (and their round-robin place), add the new ones, remove the others."""
    TeamMember.objects.filter(team=team).exclude(user_id__in=user_ids).delete()
    present = set(TeamMember.objects.filter(team=team).values_list("user_id", flat=True))
    added = TeamMember.objects.bulk_create(
        [TeamMember(team=team, user_id=user_id) for user_id in user_ids if user_id not in present]
    )
    audit_rows_created(added)  # bulk_create sends no signal


@transaction.atomic
def team_create(
    *,
    account_id: int,
    name: str,
    description: str = "",
    auto_assign: bool = True,
    member_ids: Iterable[int] = (),
) -> Team:
    name = _check_name(account_id=account_id, name=name)
    ids = _check_members(account_id=account_id, user_ids=member_ids)
    team = Team.objects.create(
        account_id=account_id, name=name, description=description, auto_assign=auto_assign
    )
    _set_members(team=team, user_ids=ids)
    return team


@transaction.atomic
def team_update(
    *,
    team: Team,
    name: str | None = None,
    description: str | None = None,
    auto_assign: bool | None = None,
    member_ids: Iterable[int] | None = None,
) -> Team:
    """Change what is given; `member_ids` replaces the member list (members who stay keep their round-robin
    place)."""
    fields: list[str] = []
    if name is not None:
        team.name = _check_name(account_id=team.account_id, name=name, team_id=team.pk)
        fields.append("name")
    if description is not None:
        team.description = description
        fields.append("description")
    if auto_assign is not None:
        team.auto_assign = auto_assign
        fields.append("auto_assign")
    if member_ids is not None:
        ids = _check_members(account_id=team.account_id, user_ids=member_ids)
        _set_members(team=team, user_ids=ids)
    if fields:
        team.save(update_fields=fields)
    return team


def membership_set_availability(*, membership: Membership, availability: str) -> Membership:
    """A person's own switch: only online people get conversations assigned automatically (and, coming online,
    the oldest waiting ones of their teams and inboxes: helpdesk.services.assignment.assign_waiting)."""
    if availability not in Membership.Availability.values:
        choices = ", ".join(Membership.Availability.values)
        raise ValidationError({"availability": [f"Choose one of: {choices}."]})
    Membership.objects.filter(pk=membership.pk).update(availability=availability)
    membership.availability = availability
    if availability == Membership.Availability.ONLINE:
        # Back online: conversations that waited for nobody in their teams and inboxes come to them now.
        assign_waiting(account_id=membership.account_id, user_id=membership.user_id)
    return membership
