"""Notifications are about what others did: taking over or assigning yourself tells nobody; assigning a
colleague tells the colleague who did it."""

from __future__ import annotations

import pytest

from helpdesk.models import Conversation, Notification
from tests.factories import ConversationFactory

pytestmark = pytest.mark.django_db


def url(team, conversation, suffix: str) -> str:
    return f"/app/accounts/{team.account.id}/conversations/{conversation.id}/{suffix}"


def test_taking_over_notifies_nobody(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status=Conversation.Status.PENDING)
    agent_client.post(url(team, conversation, "status/take_over/"))
    conversation.refresh_from_db()
    assert conversation.assignee_id == team.agent.id
    assert not Notification.objects.exists()


def test_assigning_yourself_notifies_nobody(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status=Conversation.Status.OPEN)
    agent_client.post(url(team, conversation, "assignee/"), {"assignee": str(team.agent.id)})
    conversation.refresh_from_db()
    assert conversation.assignee_id == team.agent.id
    assert not Notification.objects.exists()


def test_assigning_a_colleague_tells_them_who_did(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status=Conversation.Status.OPEN)
    agent_client.post(url(team, conversation, "assignee/"), {"assignee": str(team.admin.id)})
    (notification,) = Notification.objects.all()
    assert notification.user_id == team.admin.id
    assert notification.text.startswith("bob assigned conversation")


def test_assigning_yourself_through_the_api_notifies_nobody(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status=Conversation.Status.OPEN)
    response = agent_client.post(
        f"/api/v1/accounts/{team.account.id}/conversations/{conversation.id}/assignee/",
        {"user_id": team.agent.id},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    assert not Notification.objects.exists()
