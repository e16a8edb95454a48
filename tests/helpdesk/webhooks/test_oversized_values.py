"""Values longer than their columns: shortened where that loses nothing that matters, refused (400) where it
would break deduplication; never a 500 (PostgreSQL refuses an over-long value, SQLite stores it silently).
Runs on SQLite in the main suite and on PostgreSQL in the `postgres` stage."""

from __future__ import annotations

import json

import pytest

from helpdesk.channels.api_channel import signed_headers
from helpdesk.channels.telegram import SECRET_HEADER
from helpdesk.models import Contact, Inbox, Message
from tests.factories import AssistantInboxFactory, InboxFactory
from tests.support.webhook_fixtures import fixture_json

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


def post_api(client, inbox, payload: dict):
    body = json.dumps(payload).encode()
    return client.post(
        f"/webhooks/api/{inbox.webhook_token}/",
        data=body,
        content_type="application/json",
        headers=signed_headers(inbox.secret, body),
    )


def post_telegram(client, inbox, update: dict):
    return client.post(
        f"/webhooks/telegram/{inbox.webhook_token}/",
        data=json.dumps(update).encode(),
        content_type="application/json",
        headers={SECRET_HEADER: inbox.secret},
    )


def test_a_5000_character_name_is_shortened_and_the_message_stored(client):
    inbox = InboxFactory(channel_type=Inbox.ChannelType.TELEGRAM)
    update = fixture_json("telegram", "text_message")
    update["message"]["from"]["first_name"] = "N" * 5000

    response = post_telegram(client, inbox, update)

    assert response.status_code == 200
    assert len(Contact.objects.get().name) == 200
    assert Message.objects.count() == 1


@pytest.mark.parametrize(
    "payload",
    [
        {"message_id": "m" * 400, "contact": {"id": "c-1"}, "text": "hi"},
        {"message_id": "m-2", "contact": {"id": "u" * 400}, "text": "hi"},
    ],
)
def test_an_api_channel_id_longer_than_its_column_is_refused(client, payload):
    inbox = AssistantInboxFactory().inbox

    response = post_api(client, inbox, payload)

    assert response.status_code == 400
    assert not Message.objects.exists() and not Contact.objects.exists()


def test_telegram_update_with_a_300_digit_chat_id_is_refused_not_500(client):
    inbox = InboxFactory(channel_type=Inbox.ChannelType.TELEGRAM)
    update = fixture_json("telegram", "text_message")
    update["message"]["chat"]["id"] = 10**300
    update["message"]["from"]["id"] = 10**300

    response = post_telegram(client, inbox, update)

    assert response.status_code == 400
    assert not Message.objects.exists()
