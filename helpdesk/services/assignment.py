"""Automatic assignment, round-robin among the people online and below their capacity
(Membership.availability, Membership.max_open_assignments), for two kinds of places:

- a team that auto-assigns (Team.auto_assign): its escalations go to its members;
- an inbox that auto-assigns (Inbox.auto_assign): a conversation that needs a person and has no team (a new one
  on an inbox without AI, an AI handoff to no team) goes to the inbox's members.

Both run through one chooser (`_eligible`, `_give`). Round-robin is kept as each member row's
`last_assigned_at`: the eligible member assigned longest ago (never first) gets the next one. The place's row
(team or inbox) is locked while choosing, so two conversations at the same moment do not both pick the same
person past their capacity; the assignment itself is a conditional update (only while nobody holds the
conversation), so a conversation is never given twice.

`assign_waiting` works the other way round: when a person comes online or one of their conversations is resolved
or unassigned, the oldest conversations waiting unassigned in their auto-assigning teams and inboxes go to them.
"""

from __future__ import annotations

from typing import TypeVar

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, F, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from helpdesk.models import Conversation, Inbox, InboxMember, Membership, Team, TeamMember
from helpdesk.realtime.events import conversation_changed

from .activities import message_create_activity
from .event_webhooks import conversation_updated

Member = TypeVar("Member", TeamMember, InboxMember)

WAITING_AT_ONCE = 20
"""At most this many waiting conversations go to one person per event (someone without a capacity who comes
online takes one, not the whole queue)."""


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


def _eligible(members: QuerySet[Member], *, account_id: int) -> list[Member]:
    """Those of `members` (team or inbox member rows) who may get the next conversation, in round-robin order
    (longest since last first)."""
    membership = Membership.objects.filter(account_id=account_id, user_id=OuterRef("user_id"))
    chosen = (
        members.filter(user__is_active=True)
        .annotate(
            availability=Subquery(membership.values("availability")[:1]),
            capacity=Subquery(membership.values("max_open_assignments")[:1]),
            open_count=Coalesce(open_assignments(account_id=account_id), Value(0)),
        )
        # A member who left the account has no membership row: availability is NULL and they are skipped.
        .filter(availability=Membership.Availability.ONLINE)
        .filter(Q(capacity__isnull=True) | Q(open_count__lt=F("capacity")))
        .select_related("user")
        .order_by(F("last_assigned_at").asc(nulls_first=True), "id")
    )
    return list(chosen)


def eligible_members(*, team: Team) -> list[TeamMember]:
    """The team's members who may get the next conversation, in round-robin order."""
    return _eligible(TeamMember.objects.filter(team=team), account_id=team.account_id)


def eligible_inbox_members(*, inbox: Inbox) -> list[InboxMember]:
    """The inbox's members who may get the next conversation, in round-robin order."""
    return _eligible(InboxMember.objects.filter(inbox=inbox), account_id=inbox.account_id)


def _give(*, conversation: Conversation, member: TeamMember | InboxMember, place: str) -> bool:
    """Assign the conversation to the member's person if nobody holds it (a conditional update: of two
    writers, one wins), move the member's round-robin place, tell the page and the thread."""
    # Round-robin gives it to someone; nobody took it yet: it stays in "Needs people" until a person does.
    given = Conversation.objects.filter(pk=conversation.pk, assignee__isnull=True).update(
        assignee=member.user, taken_at=None
    )
    if not given:
        return False
    type(member).objects.filter(pk=member.pk).update(last_assigned_at=timezone.now())
    conversation.assignee = member.user
    conversation.taken_at = None
    conversation_changed(conversation, change="assignee")  # .update() sends no signal
    conversation_updated(conversation)  # outbound event webhooks, likewise
    message_create_activity(
        conversation=conversation, content=f"Assigned to {member.user} ({place}, round-robin)."
    )
    return True


@transaction.atomic
def conversation_auto_assign(*, conversation: Conversation, say_when_nobody: bool = True) -> User | None:
    """Assign an unassigned conversation to the next eligible member of its team, or, with no team, of its
    inbox; None when it is already assigned, the place does not auto-assign, or nobody is available (it then
    waits in "Unassigned" for whoever picks it up or frees a place, `assign_waiting`; the thread says so unless
    `say_when_nobody` is False: a person who just moved it there knows)."""
    if conversation.assignee_id is not None:
        return None
    if conversation.team_id is None:
        return _inbox_auto_assign(conversation=conversation, say_when_nobody=say_when_nobody)
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
    return _assign_first(
        conversation=conversation, candidates=candidates, place=team.name, say=say_when_nobody
    )


def _inbox_auto_assign(*, conversation: Conversation, say_when_nobody: bool) -> User | None:
    inbox = (
        Inbox.objects.select_for_update()
        .filter(pk=conversation.inbox_id, account_id=conversation.account_id, auto_assign=True)
        .first()
    )
    if inbox is None:
        return None
    return _assign_first(
        conversation=conversation,
        candidates=eligible_inbox_members(inbox=inbox),
        place=inbox.name,
        say=say_when_nobody,
    )


def _assign_first(
    *, conversation: Conversation, candidates: list[TeamMember] | list[InboxMember], place: str, say: bool
) -> User | None:
    if not candidates:
        if not say:
            return None
        message_create_activity(
            conversation=conversation,
            content=f"Nobody in {place} is available: the conversation waits in Unassigned.",
        )
        return None
    chosen = candidates[0]
    return chosen.user if _give(conversation=conversation, member=chosen, place=place) else None


@transaction.atomic
def assign_waiting(*, account_id: int, user_id: int, skip_id: int | None = None) -> list[int]:
    """A place freed up for the person (they came online; one of their conversations was resolved or
    unassigned): give them the oldest conversations waiting unassigned in their auto-assigning teams, and in
    their auto-assigning inboxes those with no team, up to their capacity (one when they have none, so coming
    online never sweeps the whole queue). `skip_id`: the conversation they were just taken off, which must not
    come straight back to them. Returns the ids given.

    Safe under concurrency: the person's membership row is locked (two events for one person do not both fill
    the same place), waiting rows another writer holds are skipped (SKIP LOCKED), and each assignment is a
    conditional update, so a conversation is never given twice."""
    membership = (
        Membership.objects.select_for_update()
        .filter(account_id=account_id, user_id=user_id, user__is_active=True)
        .first()
    )
    if membership is None or membership.availability != Membership.Availability.ONLINE:
        return []
    room = 1
    if membership.max_open_assignments is not None:
        held = (
            Conversation.objects.filter(account_id=account_id, assignee_id=user_id)
            .exclude(status=Conversation.Status.RESOLVED)
            .count()
        )
        room = membership.max_open_assignments - held
    if room <= 0:
        return []
    teams = TeamMember.objects.filter(user_id=user_id, team__account_id=account_id, team__auto_assign=True)
    inboxes = InboxMember.objects.filter(
        user_id=user_id, inbox__account_id=account_id, inbox__auto_assign=True
    )
    waiting = (
        Conversation.objects.filter(
            account_id=account_id, status=Conversation.Status.OPEN, assignee__isnull=True
        )
        .filter(
            Q(team_id__in=teams.values("team_id"))
            | Q(team_id__isnull=True, inbox_id__in=inboxes.values("inbox_id"))
        )
        .select_for_update(skip_locked=True, of=("self",))
        .order_by(F("waiting_since").asc(nulls_last=True), "id")
    )
    if skip_id is not None:
        waiting = waiting.exclude(pk=skip_id)
    given: list[int] = []
    for conversation in waiting[: min(room, WAITING_AT_ONCE)]:
        member: TeamMember | InboxMember | None
        if conversation.team_id is not None:
            member = teams.select_related("user", "team").filter(team_id=conversation.team_id).first()
        else:
            member = inboxes.select_related("user", "inbox").filter(inbox_id=conversation.inbox_id).first()
        if member is None:
            continue
        place = member.team.name if isinstance(member, TeamMember) else member.inbox.name
        if _give(conversation=conversation, member=member, place=place):
            given.append(conversation.pk)
    return given
