"""Inbox auto-assignment (helpdesk.services.assignment): a new conversation on an inbox without AI, or an AI
handoff to no team, goes round-robin to the inbox's online members under their capacity; an inbox that does not
auto-assign, a conversation with a team and nobody available leave it waiting."""

from __future__ import annotations

import pytest

from helpdesk.channels.base import InboundContact, InboundMessage
from helpdesk.models import Conversation, InboxMember, Membership, Message, Team, TeamMember
from helpdesk.services.conversations import conversation_escalate
from helpdesk.services.messages import message_ingest
from tests.factories import AccountFactory, ConversationFactory, InboxFactory, MembershipFactory, UserFactory

pytestmark = [pytest.mark.django_db]


def member(account, username, **membership):
    user = UserFactory(username=username)
    MembershipFactory(account=account, user=user, **membership)
    return user


def write(inbox, who: str) -> Conversation:
    """A new customer writes to the inbox (no AI serves it: the conversation is open for people)."""
    result = message_ingest(
        inbox=inbox, inbound=InboundMessage(f"m-{who}", InboundContact(source_id=who), "hi")
    )
    conversation = Conversation.objects.get(pk=result.message.conversation_id)
    assert conversation.status == Conversation.Status.OPEN
    return conversation


def activities(conversation) -> list[str]:
    return list(
        conversation.messages.filter(message_type=Message.Type.ACTIVITY)
        .order_by("id")
        .values_list("content", flat=True)
    )


@pytest.fixture
def account():
    return AccountFactory(name="Acme")


@pytest.fixture
def inbox(account):
    return InboxFactory(account=account, name="Support", auto_assign=True)


def test_new_conversations_of_an_inbox_without_ai_go_round_robin(account, inbox):
    ann, ben = member(account, "ann"), member(account, "ben")
    outsider = member(account, "cat")  # in the account, not in the inbox: never chosen
    for person in (ann, ben):
        InboxMember.objects.create(inbox=inbox, user=person)

    assignees = [write(inbox, f"c{i}").assignee for i in range(5)]

    assert [a.username for a in assignees] == ["ann", "ben", "ann", "ben", "ann"]
    assert outsider not in assignees
    first = Conversation.objects.filter(assignee=ann).order_by("id").first()
    assert "Assigned to ann (Support, round-robin)." in activities(first)
    assert first.taken_at is None  # given, not taken: still in "Needs people"


def test_capacity_and_availability_are_the_people_s_own(account, inbox):
    ann = member(account, "ann", max_open_assignments=1)
    ben = member(account, "ben", availability=Membership.Availability.BUSY)
    for person in (ann, ben):
        InboxMember.objects.create(inbox=inbox, user=person)

    first, second = write(inbox, "c1"), write(inbox, "c2")

    assert first.assignee == ann
    assert second.assignee is None
    assert "Nobody in Support is available: the conversation waits in Unassigned." in activities(second)


def test_an_inbox_that_does_not_auto_assign_leaves_it_unassigned(account):
    quiet = InboxFactory(account=account, name="Quiet")
    InboxMember.objects.create(inbox=quiet, user=member(account, "ann"))

    conversation = write(quiet, "c1")

    assert conversation.assignee is None
    assert not any("round-robin" in line or "available" in line for line in activities(conversation))


def test_a_handoff_to_no_team_uses_the_inbox_and_one_to_a_team_uses_the_team(account, inbox):
    ann, ben = member(account, "ann"), member(account, "ben")
    InboxMember.objects.create(inbox=inbox, user=ann)
    team = Team.objects.create(account=account, name="Billing", auto_assign=True)
    TeamMember.objects.create(team=team, user=ben)

    no_team = ConversationFactory(contact_inbox__inbox=inbox)
    conversation_escalate(conversation=no_team, reason="Refund", customer_message="")
    to_team = ConversationFactory(contact_inbox__inbox=inbox)
    conversation_escalate(conversation=to_team, reason="Refund", customer_message="", team_id=team.id)

    no_team.refresh_from_db()
    to_team.refresh_from_db()
    assert (no_team.assignee, to_team.assignee) == (ann, ben)
