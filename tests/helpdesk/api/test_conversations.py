"""Conversations and messages over the REST API, as a member of the account."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from helpdesk.models import Conversation, Delivery, Membership, Message
from tests.factories import (
    ContactInboxFactory,
    ConversationFactory,
    InboxFactory,
    MembershipFactory,
    MessageFactory,
)
from tests.support.on_commit import not_realtime
from tests.support.outbox import delivery_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def member():
    return MembershipFactory(role=Membership.Role.AGENT)


@pytest.fixture
def client(member):
    api = APIClient()
    api.force_authenticate(member.user)
    return api


def conversation_in(account, **kwargs):
    inbox = InboxFactory(account=account)
    return ConversationFactory(contact_inbox=ContactInboxFactory(inbox=inbox), **kwargs)


def url(account_id, suffix=""):
    return f"/api/v1/accounts/{account_id}/conversations/{suffix}"


def test_anonymous_caller_gets_401(member):
    assert APIClient().get(url(member.account_id)).status_code == 401


def test_token_authentication_works(member):
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=member.user)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert api.get(url(member.account_id)).status_code == 200


def test_list_filtered_by_status(client, member):
    open_one = conversation_in(member.account, status=Conversation.Status.OPEN)
    conversation_in(member.account, status=Conversation.Status.PENDING)

    response = client.get(url(member.account_id), {"status": "open"})

    assert response.status_code == 200
    assert response.data["count"] == 1
    assert [row["id"] for row in response.data["results"]] == [open_one.id]


def test_list_filtered_by_inbox(client, member):
    wanted = conversation_in(member.account)
    conversation_in(member.account)

    response = client.get(url(member.account_id), {"inbox": wanted.inbox_id})

    assert [row["id"] for row in response.data["results"]] == [wanted.id]


def test_list_rejects_unknown_status(client, member):
    assert client.get(url(member.account_id), {"status": "deleted"}).status_code == 400


def test_list_shows_only_the_callers_account(client, member):
    mine = conversation_in(member.account)
    conversation_in(MembershipFactory().account)

    response = client.get(url(member.account_id))

    assert [row["id"] for row in response.data["results"]] == [mine.id]


def test_detail_has_contact_and_labels(client, member):
    conversation = conversation_in(member.account, status=Conversation.Status.OPEN, escalation_reason="angry")

    response = client.get(url(member.account_id, f"{conversation.id}/"))

    assert response.status_code == 200
    assert response.data["contact"] == {"id": conversation.contact_id, "name": conversation.contact.name}
    assert response.data["inbox"] == conversation.inbox_id
    assert response.data["labels"] == []
    assert response.data["escalation_reason"] == "angry"


def test_messages_list_in_order_with_sender_names(client, member):
    conversation = conversation_in(member.account)
    MessageFactory(conversation=conversation, content="hi", sender_contact=conversation.contact)
    MessageFactory(
        conversation=conversation,
        message_type=Message.Type.OUTGOING,
        sender_type=Message.SenderType.ASSISTANT,
        ai_agent_key="refunds",
        ai_agent_name="Refunds",
        content="hello",
    )

    response = client.get(url(member.account_id, f"{conversation.id}/messages/"))

    assert response.status_code == 200
    rows = response.data["results"]
    assert [r["content"] for r in rows] == ["hi", "hello"]
    assert rows[0]["sender_name"] == conversation.contact.name
    assert (rows[1]["sender_name"], rows[1]["ai_agent_key"]) == ("Refunds", "refunds")


def test_public_reply_opens_pending_conversation_and_queues_delivery(
    client, member, django_capture_on_commit_callbacks
):
    conversation = conversation_in(member.account, status=Conversation.Status.PENDING)

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(url(member.account_id, f"{conversation.id}/messages/"), {"content": "On it!"})

    assert response.status_code == 201
    message = Message.objects.get(pk=response.data["id"])
    assert (message.message_type, message.private) == (Message.Type.OUTGOING, False)
    assert delivery_of(message).status == Delivery.Status.QUEUED
    assert message.sender_user == member.user
    assert len(not_realtime(callbacks)) == 1  # the delivery task, enqueued only after commit
    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.OPEN


def test_private_note_is_private_and_not_queued(client, member, django_capture_on_commit_callbacks):
    conversation = conversation_in(member.account, status=Conversation.Status.PENDING)

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(
            url(member.account_id, f"{conversation.id}/messages/"),
            {"content": "VIP", "private": True},
            format="json",
        )

    assert response.status_code == 201
    message = Message.objects.get(pk=response.data["id"])
    assert message.private is True
    assert not Delivery.objects.filter(pk=message.pk).exists()  # a note is never queued for sending
    assert not_realtime(callbacks) == []
    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.PENDING  # a note does not take over from the AI


@pytest.mark.parametrize("content", ["", "   ", "x" * 10_001])
def test_reply_content_required_and_bounded(client, member, content):
    conversation = conversation_in(member.account)

    response = client.post(url(member.account_id, f"{conversation.id}/messages/"), {"content": content})

    assert response.status_code == 400
    assert "content" in response.data
    assert not Message.objects.filter(conversation=conversation).exists()


def test_status_change_records_activity(client, member):
    conversation = conversation_in(member.account, status=Conversation.Status.OPEN)

    response = client.post(url(member.account_id, f"{conversation.id}/status/"), {"status": "resolved"})

    assert response.status_code == 200
    assert response.data["status"] == "resolved"
    activity = Message.objects.get(conversation=conversation, message_type=Message.Type.ACTIVITY)
    assert "from open to resolved" in activity.content


def test_status_rejects_unknown_value(client, member):
    conversation = conversation_in(member.account, status=Conversation.Status.OPEN)

    response = client.post(url(member.account_id, f"{conversation.id}/status/"), {"status": "archived"})

    assert response.status_code == 400
    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.OPEN


def test_label_added(client, member):
    conversation = conversation_in(member.account)

    response = client.post(url(member.account_id, f"{conversation.id}/labels/"), {"label": "billing"})

    assert response.status_code == 200
    assert response.data["labels"] == ["billing"]
    assert list(conversation.labels.values_list("account_id", flat=True)) == [member.account_id]


def test_label_must_be_a_slug(client, member):
    conversation = conversation_in(member.account)

    response = client.post(url(member.account_id, f"{conversation.id}/labels/"), {"label": "two words"})

    assert response.status_code == 400


def test_priority_set(client, member):
    conversation = conversation_in(member.account)

    response = client.post(url(member.account_id, f"{conversation.id}/priority/"), {"priority": "urgent"})

    assert response.status_code == 200
    conversation.refresh_from_db()
    assert conversation.priority == "urgent"


def test_priority_rejects_unknown_value(client, member):
    conversation = conversation_in(member.account)

    response = client.post(url(member.account_id, f"{conversation.id}/priority/"), {"priority": "asap"})

    assert response.status_code == 400


def test_assign_to_member_and_unassign(client, member):
    colleague = MembershipFactory(account=member.account)
    conversation = conversation_in(member.account)

    assigned = client.post(
        url(member.account_id, f"{conversation.id}/assignee/"), {"user_id": colleague.user_id}, format="json"
    )
    conversation.refresh_from_db()
    assert assigned.status_code == 200
    assert conversation.assignee_id == colleague.user_id

    cleared = client.post(
        url(member.account_id, f"{conversation.id}/assignee/"), {"user_id": None}, format="json"
    )
    conversation.refresh_from_db()
    assert cleared.status_code == 200
    assert conversation.assignee_id is None


def test_assign_to_user_of_another_account_is_rejected(client, member):
    outsider = MembershipFactory()
    conversation = conversation_in(member.account)

    response = client.post(
        url(member.account_id, f"{conversation.id}/assignee/"), {"user_id": outsider.user_id}, format="json"
    )

    assert response.status_code == 400
    conversation.refresh_from_db()
    assert conversation.assignee_id is None
