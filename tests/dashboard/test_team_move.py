"""Moving a conversation to a team (the conversation page's team picker, the API, the bulk action): the activity
line names who moved it, and a team that auto-assigns then gives it to one of its online members; someone
outside the team who held it lets go; the AI's conversations wait for their handoff."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from helpdesk.models import Conversation, Membership, Message, Team, TeamMember
from tests.factories import ConversationFactory, MembershipFactory, UserFactory


@pytest.fixture
def billing(team):
    """A "Billing" team that auto-assigns, with carol (online) in it."""
    carol = UserFactory(username="carol")
    MembershipFactory(account=team.account, user=carol, role=Membership.Role.AGENT)
    billing = Team.objects.create(account=team.account, name="Billing", auto_assign=True)
    TeamMember.objects.create(team=billing, user=carol)
    return billing, carol


def lines(conversation) -> list[str]:
    return list(
        conversation.messages.filter(message_type=Message.Type.ACTIVITY)
        .order_by("id")
        .values_list("content", flat=True)
    )


def test_moving_from_the_page_names_the_mover_and_the_team_assigns(agent_client, team, billing):
    billing_team, carol = billing
    conversation = ConversationFactory(
        contact_inbox__inbox=team.inbox, status=Conversation.Status.OPEN, assignee=team.agent
    )
    url = f"/app/accounts/{team.account.id}/conversations/{conversation.id}/team/"

    response = agent_client.post(url, {"team": str(billing_team.id)})

    assert response.status_code in (200, 302)
    conversation.refresh_from_db()
    assert (conversation.team, conversation.assignee) == (billing_team, carol)
    said = lines(conversation)
    assert "bob gave the conversation to the team Billing." in said
    assert "Assigned to carol (Billing, round-robin)." in said


def test_the_api_moves_it_and_a_holder_in_the_team_keeps_it(team, billing):
    billing_team, carol = billing
    conversation = ConversationFactory(
        contact_inbox__inbox=team.inbox, status=Conversation.Status.OPEN, assignee=carol
    )
    api = APIClient()
    api.force_authenticate(team.agent)
    url = f"/api/v1/accounts/{team.account.id}/conversations/{conversation.id}/team/"

    assert api.post(url, {"team_id": billing_team.id}, format="json").status_code == 200

    conversation.refresh_from_db()
    assert (conversation.team, conversation.assignee) == (billing_team, carol)
    assert not any("round-robin" in line for line in lines(conversation))


def test_a_conversation_the_ai_handles_is_not_assigned_on_a_move(agent_client, team, billing):
    billing_team, _ = billing
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status=Conversation.Status.PENDING)

    agent_client.post(
        f"/app/accounts/{team.account.id}/conversations/{conversation.id}/team/",
        {"team": str(billing_team.id)},
    )

    conversation.refresh_from_db()
    assert (conversation.team, conversation.assignee) == (billing_team, None)


def test_the_bulk_move_assigns_each_through_the_team(agent_client, team, billing):
    billing_team, carol = billing
    rows = [
        ConversationFactory(contact_inbox__inbox=team.inbox, status=Conversation.Status.OPEN)
        for _ in range(2)
    ]

    agent_client.post(
        f"/app/accounts/{team.account.id}/conversations/bulk/?list=all",
        {"action": "team", "team": str(billing_team.id), "ids": [str(r.id) for r in rows]},
    )

    for row in rows:
        row.refresh_from_db()
        assert (row.team, row.assignee) == (billing_team, carol)
