"""Escalations without a team go to the inbox's members (still in the account), then to the account's
administrators; a team still wins; an inbox's members are people of its account; the actor is never told."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from helpdesk.models import InboxMember, Membership, Notification, Team, TeamMember
from helpdesk.services.conversations import conversation_escalate
from helpdesk.services.inbox_members import inbox_members_set
from tests.factories import ConversationFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


def told() -> list[str]:
    return sorted(n.user.username for n in Notification.objects.filter(kind="escalation"))


@pytest.fixture
def carol(team):
    user = UserFactory(username="carol")
    MembershipFactory(account=team.account, user=user, role=Membership.Role.AGENT)
    return user


def escalate(team, **kwargs) -> None:
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="pending")
    assert conversation.inbox_id == team.inbox.pk
    conversation_escalate(conversation=conversation, reason="Refund", customer_message="", **kwargs)


def test_without_a_team_only_the_inboxs_members_are_told(team, carol):
    inbox_members_set(inbox=team.inbox, users=[carol])
    escalate(team)
    assert told() == ["carol"]  # not the other agent bob, not the admin alice


def test_without_a_team_or_inbox_members_the_administrators_are_told(team, carol):
    escalate(team)
    assert told() == ["alice"]


def test_a_member_who_left_the_account_is_skipped(team, carol):
    dave = UserFactory(username="dave")
    MembershipFactory(account=team.account, user=dave, role=Membership.Role.AGENT)
    inbox_members_set(inbox=team.inbox, users=[carol, dave])
    Membership.objects.filter(account=team.account, user=dave).delete()
    escalate(team)
    assert told() == ["carol"]


def test_when_every_inbox_member_left_the_administrators_are_told(team, carol):
    inbox_members_set(inbox=team.inbox, users=[carol])
    Membership.objects.filter(account=team.account, user=carol).delete()
    assert InboxMember.objects.filter(inbox=team.inbox, user=carol).exists()  # the row stays; it is not read
    escalate(team)
    assert told() == ["alice"]


def test_the_team_wins_over_the_inboxs_members(team, carol):
    inbox_members_set(inbox=team.inbox, users=[carol])
    returns = Team.objects.create(account=team.account, name="Returns", auto_assign=False)
    TeamMember.objects.create(team=returns, user=team.agent)
    escalate(team, team_id=returns.id)
    assert told() == ["bob"]


def test_a_team_with_nobody_left_falls_to_the_inboxs_members(team, carol, other_team):
    inbox_members_set(inbox=team.inbox, users=[carol])
    returns = Team.objects.create(account=team.account, name="Returns", auto_assign=False)
    TeamMember.objects.create(team=returns, user=other_team.admin)  # not in this account
    escalate(team, team_id=returns.id)
    assert told() == ["carol"]


def test_a_user_of_another_account_is_refused_as_inbox_member(team, carol, other_team):
    inbox_members_set(inbox=team.inbox, users=[carol])
    with pytest.raises(ValidationError) as refused:
        inbox_members_set(inbox=team.inbox, users=[carol, other_team.admin])
    assert refused.value.message_dict == {"members": ["Not people of the inbox's account: mallory."]}
    # Nothing half-applied: carol stays the only member.
    assert list(InboxMember.objects.filter(inbox=team.inbox).values_list("user__username", flat=True)) == [
        "carol"
    ]


def test_setting_members_keeps_stayers_adds_and_removes(team, carol):
    inbox_members_set(inbox=team.inbox, users=[carol, team.agent])
    kept = InboxMember.objects.get(inbox=team.inbox, user=carol)
    assert inbox_members_set(inbox=team.inbox, users=[carol, team.admin, carol]) == [carol.pk, team.admin.pk]
    rows = InboxMember.objects.filter(inbox=team.inbox)
    assert sorted(rows.values_list("user__username", flat=True)) == ["alice", "carol"]
    assert rows.get(user=carol).pk == kept.pk


def test_the_actor_is_never_told_even_as_the_only_inbox_member(team, carol):
    inbox_members_set(inbox=team.inbox, users=[carol])
    escalate(team, by="carol", actor=carol)
    assert told() == []  # and not passed on to the administrators either
    inbox_members_set(inbox=team.inbox, users=[carol, team.agent])
    escalate(team, by="carol", actor=carol)
    assert told() == ["bob"]


def test_a_muted_inbox_member_is_not_told(team, carol):
    inbox_members_set(inbox=team.inbox, users=[carol, team.agent])
    Membership.objects.filter(account=team.account, user=carol).update(escalation_notifications=False)
    escalate(team)
    assert told() == ["bob"]


def test_a_team_that_muted_escalations_does_not_pass_them_to_the_inbox(team, carol):
    inbox_members_set(inbox=team.inbox, users=[carol])
    returns = Team.objects.create(account=team.account, name="Returns", auto_assign=False)
    TeamMember.objects.create(team=returns, user=team.agent)
    Membership.objects.filter(account=team.account, user=team.agent).update(escalation_notifications=False)
    escalate(team, team_id=returns.id)
    assert told() == []
