"""Waiting conversations go to a person when a place frees up (helpdesk.services.assignment.assign_waiting):
they come online, or one of their conversations is resolved or unassigned. Oldest first, up to their capacity,
only from their own auto-assigning teams and inboxes, never the conversation they were just taken off."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from helpdesk.models import Conversation, InboxMember, Membership, Team, TeamMember
from helpdesk.services.conversations import conversation_assign, conversation_set_status
from helpdesk.services.teams import membership_set_availability
from tests.factories import AccountFactory, ConversationFactory, InboxFactory, MembershipFactory, UserFactory

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def account():
    return AccountFactory(name="Acme")


@pytest.fixture
def inbox(account):
    return InboxFactory(account=account, name="Support", auto_assign=True)


def person(account, username, **membership):
    user = UserFactory(username=username)
    MembershipFactory(account=account, user=user, **membership)
    return user


def waiting(inbox, minutes_ago: int, **fields) -> Conversation:
    return ConversationFactory(
        contact_inbox__inbox=inbox,
        status=Conversation.Status.OPEN,
        waiting_since=timezone.now() - timedelta(minutes=minutes_ago),
        **fields,
    )


def assignees(*conversations) -> list[str | None]:
    out = []
    for conversation in conversations:
        conversation.refresh_from_db()
        out.append(conversation.assignee.username if conversation.assignee else None)
    return out


def test_coming_online_takes_the_oldest_waiting_conversation(account, inbox):
    ann = person(account, "ann", availability=Membership.Availability.OFFLINE, max_open_assignments=None)
    InboxMember.objects.create(inbox=inbox, user=ann)
    newer, older = waiting(inbox, 5), waiting(inbox, 30)
    elsewhere = waiting(InboxFactory(account=account, auto_assign=True), 60)  # not ann's inbox

    membership_set_availability(membership=Membership.objects.get(user=ann), availability="busy")
    assert assignees(newer, older, elsewhere) == [None, None, None]

    membership_set_availability(membership=Membership.objects.get(user=ann), availability="online")

    # No capacity set: one conversation per freed place, the one waiting longest.
    assert assignees(newer, older, elsewhere) == [None, "ann", None]


def test_coming_online_fills_up_to_the_capacity(account, inbox):
    ann = person(account, "ann", availability=Membership.Availability.OFFLINE, max_open_assignments=2)
    InboxMember.objects.create(inbox=inbox, user=ann)
    rows = [waiting(inbox, minutes) for minutes in (10, 20, 30)]

    membership_set_availability(membership=Membership.objects.get(user=ann), availability="online")

    assert assignees(*rows) == [None, "ann", "ann"]


def test_resolving_frees_a_place_for_the_next_waiting_one(account, inbox):
    ann = person(account, "ann", max_open_assignments=1)
    InboxMember.objects.create(inbox=inbox, user=ann)
    held = waiting(inbox, 60, assignee=ann)
    queued = waiting(inbox, 10)

    conversation_set_status(conversation=held, status=Conversation.Status.RESOLVED, actor=ann)

    assert assignees(queued) == ["ann"]
    assert "Assigned to ann (Support, round-robin)." in queued.messages.values_list("content", flat=True)


def test_unassigning_gives_a_waiting_one_never_the_same_back(account, inbox):
    ann = person(account, "ann", max_open_assignments=1)
    InboxMember.objects.create(inbox=inbox, user=ann)
    held = waiting(inbox, 60, assignee=ann)  # the oldest: it would come straight back if not skipped
    queued = waiting(inbox, 10)

    conversation_assign(conversation=held, assignee=None, by=ann)

    assert assignees(held, queued) == [None, "ann"]


def test_a_team_s_waiting_conversation_goes_to_its_member(account, inbox):
    ben = person(account, "ben", availability=Membership.Availability.OFFLINE)
    team = Team.objects.create(account=account, name="Billing", auto_assign=True)
    TeamMember.objects.create(team=team, user=ben)
    quiet_team = Team.objects.create(account=account, name="Quiet", auto_assign=False)
    TeamMember.objects.create(team=quiet_team, user=ben)
    not_auto = waiting(inbox, 90, team=quiet_team)
    for_team = waiting(inbox, 30, team=team)

    membership_set_availability(membership=Membership.objects.get(user=ben), availability="online")

    assert assignees(not_auto, for_team) == [None, "ben"]
    assert TeamMember.objects.get(team=team, user=ben).last_assigned_at is not None


def test_an_inbox_that_does_not_auto_assign_keeps_its_queue(account):
    quiet = InboxFactory(account=account, auto_assign=False)
    ann = person(account, "ann", availability=Membership.Availability.OFFLINE)
    InboxMember.objects.create(inbox=quiet, user=ann)
    queued = waiting(quiet, 10)

    membership_set_availability(membership=Membership.objects.get(user=ann), availability="online")

    assert assignees(queued) == [None]


def test_switching_to_online_through_the_api_assigns_the_waiting_one(account, inbox):
    ann = person(account, "ann", availability=Membership.Availability.OFFLINE, max_open_assignments=None)
    InboxMember.objects.create(inbox=inbox, user=ann)
    queued = waiting(inbox, 10)
    api = APIClient()
    api.force_authenticate(ann)

    response = api.patch(
        f"/api/v1/accounts/{account.id}/availability/", {"availability": "online"}, format="json"
    )

    assert response.status_code == 200
    assert assignees(queued) == ["ann"]
