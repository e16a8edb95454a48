"""Escalations go to the conversation's team, else to the account's administrators, never to everyone; each person
may mute escalations (the bell's "Mute escalations"), and the person who hands a conversation over is not told."""

from __future__ import annotations

import pytest

from helpdesk.models import Membership, Notification, Team, TeamMember
from helpdesk.services.conversations import conversation_assign, conversation_escalate
from tests.factories import ConversationFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


def told(kind: str = "escalation") -> list[str]:
    return sorted(n.user.username for n in Notification.objects.filter(kind=kind))


@pytest.fixture
def carol(team):
    user = UserFactory(username="carol")
    MembershipFactory(account=team.account, user=user, role=Membership.Role.AGENT)
    return user


def test_without_a_team_only_the_administrators_are_told(team, carol):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="pending")
    conversation_escalate(conversation=conversation, reason="Refund", customer_message="")
    assert told() == ["alice"]  # the admin; not the agents bob and carol


def test_the_team_is_told_and_nobody_else(team, carol):
    returns = Team.objects.create(account=team.account, name="Returns", auto_assign=False)
    TeamMember.objects.create(team=returns, user=carol)
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="pending")
    conversation_escalate(conversation=conversation, reason="Refund", customer_message="", team_id=returns.id)
    assert told() == ["carol"]


def test_a_team_whose_members_left_falls_back_to_the_administrators(team, other_team):
    returns = Team.objects.create(account=team.account, name="Returns", auto_assign=False)
    TeamMember.objects.create(team=returns, user=other_team.admin)  # not in this account
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="pending")
    conversation_escalate(conversation=conversation, reason="Refund", customer_message="", team_id=returns.id)
    assert told() == ["alice"]


def test_a_muted_person_is_not_told_of_escalations_but_still_of_assignments(team, carol):
    Membership.objects.filter(user=team.admin).update(escalation_notifications=False)
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="pending")
    conversation_escalate(conversation=conversation, reason="Refund", customer_message="")
    assert told() == []
    conversation_assign(conversation=conversation, assignee=team.admin, by=team.agent)
    assert told("assigned") == ["alice"]


def test_the_person_who_hands_it_over_is_not_told(team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="pending")
    conversation_escalate(
        conversation=conversation, reason="Re-routed", customer_message="", by="alice", actor=team.admin
    )
    assert told() == []


def test_the_bell_mutes_and_unmutes_ones_own_escalations_only(admin_client, team, other_team):
    theirs = MembershipFactory(account=other_team.account, user=team.admin, role=Membership.Role.AGENT)
    url = f"/app/accounts/{team.account.id}/notifications/escalations/"
    page = f"/app/accounts/{team.account.id}/lists/all/"
    assert "Mute escalations" in admin_client.get(page).content.decode()
    response = admin_client.post(url, {"escalations": "off", "next": page}, follow=True)
    assert "Tell me about escalations" in response.content.decode()
    mine = Membership.objects.get(account=team.account, user=team.admin)
    theirs.refresh_from_db()
    assert mine.escalation_notifications is False and theirs.escalation_notifications is True
    admin_client.post(url, {"escalations": "on"})
    mine.refresh_from_db()
    assert mine.escalation_notifications is True
    assert admin_client.get(url).status_code == 405  # a change is a POST
