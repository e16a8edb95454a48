"""WhatsApp templates over the REST API: a member lists an inbox's templates (paged), sends one on a conversation
(the stored reply reads the filled body); a wrong count of values is a 400 naming it, another account's inbox or
another inbox's template a 404."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from helpdesk.models import Inbox, Membership, Message, WhatsAppTemplate
from tests.factories import ConversationFactory, InboxFactory, MembershipFactory, MessageFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent() -> Membership:
    return MembershipFactory(role=Membership.Role.AGENT)


@pytest.fixture
def inbox(agent: Membership) -> Inbox:
    return InboxFactory(account=agent.account, channel_type=Inbox.ChannelType.WHATSAPP)


@pytest.fixture
def template(inbox: Inbox) -> WhatsAppTemplate:
    return WhatsAppTemplate.objects.create(
        inbox=inbox, name="follow_up", language="en_US", body="Still on {{1}}?"
    )


def client_of(membership: Membership) -> APIClient:
    api = APIClient()
    api.force_authenticate(membership.user)
    return api


def test_list_is_paged_and_scoped(agent: Membership, inbox: Inbox, template: WhatsAppTemplate) -> None:
    WhatsAppTemplate.objects.create(
        inbox=inbox, name="promo", language="en_US", body="Sale", status="pending"
    )
    api = client_of(agent)
    listed = api.get(f"/api/v1/accounts/{agent.account_id}/inboxes/{inbox.pk}/whatsapp-templates/?limit=1")
    assert listed.status_code == 200, listed.data
    assert listed.data["count"] == 2
    assert [row["name"] for row in listed.data["results"]] == ["follow_up"]
    assert listed.data["results"][0]["variables"] == 1
    stranger = MembershipFactory(role=Membership.Role.ADMIN)
    answer = client_of(stranger).get(
        f"/api/v1/accounts/{stranger.account_id}/inboxes/{inbox.pk}/whatsapp-templates/"
    )
    assert answer.status_code == 404


def test_send_stores_the_filled_reply(agent: Membership, inbox: Inbox, template: WhatsAppTemplate) -> None:
    conversation = ConversationFactory(contact_inbox__inbox=inbox)
    MessageFactory(conversation=conversation, content="hello")
    api = client_of(agent)
    url = f"/api/v1/accounts/{agent.account_id}/conversations/{conversation.pk}/whatsapp-template/"
    wrong = api.post(url, {"template_id": template.pk, "variables": []}, format="json")
    assert wrong.status_code == 400 and "needs 1 values, 0 given" in str(wrong.data["variables"])
    sent = api.post(url, {"template_id": template.pk, "variables": ["your refund"]}, format="json")
    assert sent.status_code == 201, sent.data
    assert sent.data["content"] == "Still on your refund?"
    message = Message.objects.get(pk=sent.data["id"])
    assert message.whatsapp_template_send.name == "follow_up"
    other = WhatsAppTemplate.objects.create(
        inbox=InboxFactory(account=agent.account, channel_type=Inbox.ChannelType.WHATSAPP),
        name="x",
        language="en",
        body="x",
    )
    assert api.post(url, {"template_id": other.pk, "variables": []}, format="json").status_code == 404


def test_free_text_on_a_closed_window_is_refused_at_once_and_stores_nothing(
    agent: Membership, inbox: Inbox
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    conversation = ConversationFactory(contact_inbox__inbox=inbox)
    wrote = MessageFactory(conversation=conversation, content="hello")
    Message.objects.filter(pk=wrote.pk).update(created_at=timezone.now() - timedelta(hours=25))
    url = f"/api/v1/accounts/{agent.account_id}/conversations/{conversation.pk}/messages/"
    api = client_of(agent)
    before = Message.objects.filter(conversation=conversation).count()

    refused = api.post(url, {"content": "Are you still there?"}, format="json")
    assert refused.status_code == 400
    assert "whatsapp-template" in refused.json()["content"][0]
    assert Message.objects.filter(conversation=conversation).count() == before
    # A private note is never sent, so the window does not matter.
    assert (
        api.post(url, {"content": "Called them instead", "private": True}, format="json").status_code == 201
    )
    # The customer writes again: the window is open and free text goes.
    MessageFactory(conversation=conversation, content="yes, still here")
    assert api.post(url, {"content": "Great, here is the answer."}, format="json").status_code == 201
