"""Automatic assignment: an escalated conversation of a team goes to the next of its members, round-robin,
among those online and below their capacity (Membership.availability, Membership.max_open_assignments).

Round-robin is kept as each member's `last_assigned_at`: the eligible member assigned longest ago (never
first) gets the next one. The team's row is locked while choosing, so two escalations at the same moment do
not both pick the same person past their capacity.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, F, IntegerField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from helpdesk.models import Conversation, Membership, Team, TeamMember
from helpdesk.realtime.events import conversation_changed

from .activities import message_create_activity


def open_assignments(*, account_id: int) -> Subquery:
    """Per `user_id` of the outer query: how many unresolved conversations of the account they hold."""
    return Subquery(
        Conversation.objects.filter(account_id=account_id, assignee_id=OuterRef("user_id"))
        .exclude(status=Conversation.Status.RESOLVED)
        .order_by()
        .values("assignee_id")
        .annotate(n=Count("id"))
        .values("n")[:1],
        output_field=IntegerField(),
    )


def eligible_members(*, team: Team) -> list[TeamMember]:
    """The team's members who may get the next conversation, in round-robin order (longest since last first)."""
    membership = Membership.objects.filter(account_id=team.account_id, user_id=OuterRef("user_id"))
    members = (
        TeamMember.objects.filter(team=team, user__is_active=True)
        .annotate(
            availability=Subquery(membership.values("availability")[:1]),
            capacity=Subquery(membership.values("max_open_assignments")[:1]),
            open_count=Coalesce(open_assignments(account_id=team.account_id), Value(0)),
        )
        # A member who left the account has no membership row: availability is NULL and they are skipped.
        .filter(availability=Membership.Availability.ONLINE)
        .filter(Q(capacity__isnull=True) | Q(open_count__lt=F("capacity")))
        .select_related("user")
        .order_by(F("last_assigned_at").asc(nulls_first=True), "id")
    )
    return list(members)


@transaction.atomic
def conversation_auto_assign(*, conversation: Conversation) -> User | None:
    """Assign an unassigned conversation of a team to the team's next eligible member; None when it has no
    team, the team does not auto-assign, it is already assigned, or nobody is available (it then waits in
    "Unassigned" for whoever picks it up)."""
    if conversation.team_id is None or conversation.assignee_id is not None:
        return None
    # Scoped to the conversation's account: a team id that reached the row some other way never hands the
    # conversation to another tenant's people.
    team = (
        Team.objects.select_for_update()
        .filter(pk=conversation.team_id, account_id=conversation.account_id)
        .first()
    )
    if team is None or not team.auto_assign:
        return None
    candidates = eligible_members(team=team)
    if not candidates:
        message_create_activity(
            conversation=conversation,
            content=f"Nobody in {team.name} is available: the conversation waits in Unassigned.",
        )
        return None
    chosen = candidates[0]
    TeamMember.objects.filter(pk=chosen.pk).update(last_assigned_at=timezone.now())
    # Round-robin gives it to someone; nobody took it yet: it stays in "Needs people" until a person does.
    Conversation.objects.filter(pk=conversation.pk).update(assignee=chosen.user, taken_at=None)
    conversation.assignee = chosen.user
    conversation.taken_at = None
    conversation_changed(conversation, change="assignee")  # .update() sends no signal
    message_create_activity(
        conversation=conversation, content=f"Assigned to {chosen.user} ({team.name}, round-robin)."
    )
    return chosen.user
