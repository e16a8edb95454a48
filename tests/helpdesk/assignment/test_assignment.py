"""Round-robin assignment of a team's escalations (helpdesk.services.assignment): order, capacity,
availability, people who left, teams that do not auto-assign, nobody available, and the path from a
scenario's or routing node's handoff team through captain's outcome to the assignee."""

from __future__ import annotations

import pytest

from captain.answering.services.outcomes import outcome_apply
from captain.assistants.models import TRIAGE_KEY
from captain.routing.models import RoutingNode
from captain.runtime import HumanHandoff, RunResult, Usage
from helpdesk.models import Conversation, Membership, Message, Team, TeamMember
from helpdesk.services.conversations import conversation_escalate, conversation_set_status
from tests.factories import (
    AccountFactory,
    AssistantInboxFactory,
    ConversationFactory,
    InboxFactory,
    MembershipFactory,
    ScenarioFactory,
    UserFactory,
)

pytestmark = [pytest.mark.django_db]


def make_team(account, *people, auto_assign=True, name="Billing"):
    team = Team.objects.create(account=account, name=name, auto_assign=auto_assign)
    for person in people:
        TeamMember.objects.create(team=team, user=person)
    return team


def member(account, username, **membership):
    user = UserFactory(username=username)
    MembershipFactory(account=account, user=user, **membership)
    return user


def escalate(account, team, inbox=None):
    conversation = ConversationFactory(contact_inbox__inbox=inbox or InboxFactory(account=account))
    conversation_escalate(conversation=conversation, reason="Refund", customer_message="", team_id=team.id)
    conversation.refresh_from_db()
    return conversation


def activities(conversation):
    return list(
        conversation.messages.filter(message_type=Message.Type.ACTIVITY)
        .order_by("id")
        .values_list("content", flat=True)
    )


@pytest.fixture
def account():
    return AccountFactory(name="Acme")


def test_escalations_go_round_robin_in_a_stable_order(account):
    ann, ben, cat = (member(account, name) for name in ("ann", "ben", "cat"))
    team = make_team(account, ann, ben, cat)
    inbox = InboxFactory(account=account)

    assignees = [escalate(account, team, inbox).assignee for _ in range(7)]

    # Never-assigned members first (in the order they joined), then the one assigned longest ago.
    assert [a.username for a in assignees] == ["ann", "ben", "cat", "ann", "ben", "cat", "ann"]
    conversation = Conversation.objects.filter(assignee=ann).first()
    assert conversation.team_id == team.id
    assert "Assigned to ann (Billing, round-robin)." in activities(conversation)


def test_a_member_at_capacity_is_skipped_until_a_conversation_is_resolved(account):
    ann = member(account, "ann", max_open_assignments=1)
    ben = member(account, "ben", max_open_assignments=2)
    team = make_team(account, ann, ben)
    inbox = InboxFactory(account=account)

    first, second, third = (escalate(account, team, inbox) for _ in range(3))
    assert [c.assignee.username for c in (first, second, third)] == ["ann", "ben", "ben"]

    # Everybody is full: the next one waits unassigned.
    fourth = escalate(account, team, inbox)
    assert fourth.assignee is None

    # Resolving ann's conversation frees her place: the one that waited is hers now.
    conversation_set_status(conversation=first, status=Conversation.Status.RESOLVED, actor=ann)
    fourth.refresh_from_db()
    assert fourth.assignee == ann


def test_an_empty_capacity_means_no_limit(account):
    ann = member(account, "ann", max_open_assignments=None)
    team = make_team(account, ann)
    inbox = InboxFactory(account=account)
    assert all(escalate(account, team, inbox).assignee == ann for _ in range(12))


def test_open_conversations_of_another_account_do_not_use_up_capacity(account):
    ann = member(account, "ann", max_open_assignments=1)
    elsewhere = AccountFactory()
    MembershipFactory(account=elsewhere, user=ann)
    ConversationFactory(contact_inbox__inbox=InboxFactory(account=elsewhere), assignee=ann)
    team = make_team(account, ann)
    assert escalate(account, team).assignee == ann


def test_busy_and_offline_members_are_skipped(account):
    busy = member(account, "busy", availability=Membership.Availability.BUSY)
    offline = member(account, "offline", availability=Membership.Availability.OFFLINE)
    online = member(account, "online")
    team = make_team(account, busy, offline, online)
    inbox = InboxFactory(account=account)

    assert {escalate(account, team, inbox).assignee.username for _ in range(3)} == {"online"}

    Membership.objects.filter(user=busy).update(availability=Membership.Availability.ONLINE)
    assert escalate(account, team, inbox).assignee == busy


def test_members_who_left_the_account_or_were_deactivated_are_skipped(account):
    left = member(account, "left")
    deactivated = member(account, "deactivated")
    stays = member(account, "stays")
    team = make_team(account, left, deactivated, stays)
    Membership.objects.filter(user=left, account=account).delete()
    deactivated.is_active = False
    deactivated.save()
    # Still a member of another account, online there: that says nothing about this one.
    MembershipFactory(account=AccountFactory(), user=left)

    inbox = InboxFactory(account=account)
    assert {escalate(account, team, inbox).assignee.username for _ in range(3)} == {"stays"}


def test_a_team_that_does_not_auto_assign_keeps_the_team_and_no_assignee(account):
    ann = member(account, "ann")
    team = make_team(account, ann, auto_assign=False)

    conversation = escalate(account, team)

    assert conversation.team_id == team.id and conversation.assignee is None
    assert not any("Assigned to" in line for line in activities(conversation))


def test_nobody_available_leaves_it_unassigned_with_an_activity_line(account):
    ann = member(account, "ann", availability=Membership.Availability.OFFLINE)
    team = make_team(account, ann)

    conversation = escalate(account, team)

    assert conversation.assignee is None and conversation.team_id == team.id
    assert "Nobody in Billing is available: the conversation waits in Unassigned." in activities(conversation)


def test_an_already_assigned_conversation_keeps_its_assignee(account):
    ann, ben = member(account, "ann"), member(account, "ben")
    team = make_team(account, ann)
    conversation = ConversationFactory(contact_inbox__inbox=InboxFactory(account=account), assignee=ben)
    conversation_escalate(conversation=conversation, reason="x", customer_message="", team_id=team.id)
    conversation.refresh_from_db()
    assert conversation.assignee == ben
    assert TeamMember.objects.get(team=team, user=ann).last_assigned_at is None


def test_another_accounts_team_is_never_used(account):
    other = AccountFactory()
    theirs = member(other, "theirs")
    their_team = make_team(other, theirs)

    conversation = escalate(account, their_team)

    assert conversation.team_id is None and conversation.assignee is None


def handoff(link, agent_key):
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox)
    outcome = HumanHandoff(reason="The customer wants a refund over the limit.")
    outcome_apply(
        conversation_id=conversation.id,
        assistant=link.assistant,
        outcome=outcome,
        result=RunResult(outcome=outcome, agent_key=agent_key, usage=Usage(), route=[TRIAGE_KEY, agent_key]),
        agent_names={},
        trigger_message_ids=[],
        trace_id="0" * 32,
        duration_ms=5,
    )
    conversation.refresh_from_db()
    return conversation


def test_a_scenarios_handoff_team_gets_the_conversation_and_an_assignee_end_to_end():
    link = AssistantInboxFactory()
    account = link.assistant.account
    ann = member(account, "ann")
    billing = make_team(account, ann)
    scenario = ScenarioFactory(assistant=link.assistant, key="refunds", handoff_team=billing)

    conversation = handoff(link, scenario.key)

    assert conversation.status == Conversation.Status.OPEN
    assert conversation.team_id == billing.id and conversation.assignee == ann
    assert conversation.escalated_at is not None


def test_a_routing_nodes_handoff_team_is_used_when_the_scenario_names_none():
    link = AssistantInboxFactory()
    account = link.assistant.account
    ann, ben = member(account, "ann"), member(account, "ben")
    make_team(account, ann, name="Billing")
    front = make_team(account, ben, name="Front desk")
    ScenarioFactory(assistant=link.assistant, key="refunds")
    RoutingNode.objects.create(assistant=link.assistant, key=TRIAGE_KEY, handoff_team=front)

    conversation = handoff(link, "refunds")

    assert conversation.team_id == front.id and conversation.assignee == ben


def test_a_handoff_without_a_team_stays_unassigned_without_a_team():
    link = AssistantInboxFactory()
    member(link.assistant.account, "ann")
    conversation = handoff(link, TRIAGE_KEY)
    assert conversation.status == Conversation.Status.OPEN
    assert conversation.team_id is None and conversation.assignee is None
