"""`POST .../conversations/<id>/status/` with `snoozed` and `snoozed_until`: validated, scoped to the account."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from helpdesk import timers
from helpdesk.models import Conversation, Membership, Message
from tests.factories import ContactInboxFactory, ConversationFactory, InboxFactory, MembershipFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def member():
    return MembershipFactory(role=Membership.Role.AGENT)


@pytest.fixture
def client(member):
    api = APIClient()
    api.force_authenticate(member.user)
    return api


def conversation_in(account, **fields):
    return ConversationFactory(
        contact_inbox=ContactInboxFactory(inbox=InboxFactory(account=account)), **fields
    )


def status_url(conversation):
    return f"/api/v1/accounts/{conversation.account_id}/conversations/{conversation.id}/status/"


def test_snooze_until_a_time_then_the_sweep_wakes_it(client, member):
    conversation = conversation_in(member.account, status=Conversation.Status.OPEN)
    until = timezone.now() + timedelta(hours=3)

    response = client.post(
        status_url(conversation), {"status": "snoozed", "snoozed_until": until.isoformat()}, format="json"
    )

    assert response.status_code == 200, response.data
    assert response.data["status"] == "snoozed"
    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.SNOOZED
    assert abs((conversation.snoozed_until - until).total_seconds()) < 1
    assert Message.objects.filter(
        conversation=conversation,
        message_type=Message.Type.ACTIVITY,
        content__contains="snoozed the conversation",
    ).exists()

    assert timers.snoozed_wake_sweep() == 0  # not yet
    Conversation.objects.filter(pk=conversation.pk).update(
        snoozed_until=timezone.now() - timedelta(seconds=1)
    )
    assert timers.snoozed_wake_sweep() == 1
    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.OPEN


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"status": "snoozed"}, "Say until when"),
        ({"status": "snoozed", "snoozed_until": None}, "Say until when"),
        ({"status": "snoozed", "snoozed_until": "2001-01-01T00:00:00Z"}, "has passed"),
        ({"status": "snoozed", "snoozed_until": "tomorrow"}, "Datetime has wrong format"),
        ({"status": "open", "snoozed_until": "2099-01-01T00:00:00Z"}, "only with the status snoozed"),
    ],
)
def test_snooze_is_validated_with_clear_errors(client, member, payload, message):
    conversation = conversation_in(member.account, status=Conversation.Status.OPEN)

    response = client.post(status_url(conversation), payload, format="json")

    assert response.status_code == 400
    assert message in str(response.data["snoozed_until"][0])
    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.OPEN and conversation.snoozed_until is None


def test_another_accounts_conversation_cannot_be_snoozed(client, member):
    other = conversation_in(MembershipFactory().account, status=Conversation.Status.OPEN)

    response = client.post(
        status_url(other).replace(f"/accounts/{other.account_id}/", f"/accounts/{member.account_id}/"),
        {"status": "snoozed", "snoozed_until": (timezone.now() + timedelta(hours=1)).isoformat()},
        format="json",
    )
    assert response.status_code == 404
    response = client.post(
        status_url(other),
        {"status": "snoozed", "snoozed_until": (timezone.now() + timedelta(hours=1)).isoformat()},
        format="json",
    )
    assert response.status_code in (403, 404)
    other.refresh_from_db()
    assert other.status == Conversation.Status.OPEN


def test_other_statuses_still_clear_a_snooze(client, member):
    conversation = conversation_in(
        member.account, status=Conversation.Status.SNOOZED, snoozed_until=timezone.now() + timedelta(days=1)
    )

    response = client.post(status_url(conversation), {"status": "open"}, format="json")

    assert response.status_code == 200
    assert response.data["snoozed_until"] is None
    conversation.refresh_from_db()
    assert conversation.snoozed_until is None
