"""Telegram Bot API: one test per Update shape through the real view, the secret token check, and sends
against a fake Bot API on 127.0.0.1."""

from __future__ import annotations

import json
import logging

import pytest
from celery.exceptions import Retry

from captain.answering.models import CreditBalance, ReplyJob
from captain.answering.services.credits import credit_debit
from helpdesk.channels import telegram
from helpdesk.channels.telegram import SECRET_HEADER
from helpdesk.models import Contact, Conversation, Delivery, Inbox, Message
from helpdesk.tasks import message_deliver
from tests.factories import AssistantInboxFactory, CreditBalanceFactory, InboxFactory
from tests.support.fake_provider import (
    FakeProvider,
    http_500,
    telegram_blocked,
    telegram_retry_after,
    telegram_unauthorized,
)
from tests.support.on_commit import not_realtime
from tests.support.outbox import delivery_of
from tests.support.servers import free_port
from tests.support.webhook_fixtures import fixture_body, outgoing_message, record_backoffs

pytestmark = pytest.mark.django_db

SECRET = "tg_secret-token-123"
BOT_TOKEN = "7000000001:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
ANN_CHAT = "5112233445"


@pytest.fixture
def inbox() -> Inbox:
    return AssistantInboxFactory(
        inbox__channel_type=Inbox.ChannelType.TELEGRAM, inbox__secret=SECRET, inbox__access_token=BOT_TOKEN
    ).inbox


@pytest.fixture
def provider():
    with FakeProvider() as fake:
        yield fake


@pytest.fixture
def sending_inbox(inbox: Inbox, provider: FakeProvider) -> Inbox:
    inbox.provider_config = {"api_base_url": provider.base_url}
    inbox.save()
    return inbox


def post(client, inbox: Inbox, body: bytes, secret: str | None = SECRET):
    headers = {} if secret is None else {SECRET_HEADER: secret}
    return client.post(
        f"/webhooks/telegram/{inbox.webhook_token}/",
        data=body,
        content_type="application/json",
        headers=headers,
    )


# ---- inbound shapes ----------------------------------------------------------------------------------------


def test_text_message_is_stored_and_given_to_the_ai(client, inbox, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        response = post(client, inbox, fixture_body("telegram", "text_message"))
    assert response.status_code == 200
    assert response.json()["status"] == "accepted"
    message = Message.objects.get()
    assert message.content == "Where is my order #1042?"
    assert message.provider_message_id == "tg-update:731245602"
    assert ReplyJob.objects.get(pk=message.pk).status == ReplyJob.Status.PENDING
    assert message.conversation.contact_inbox.source_id == ANN_CHAT
    assert message.conversation.contact.name == "Ann Lee"
    assert len(not_realtime(callbacks)) == 1


def test_photo_with_caption_keeps_the_largest_size_and_the_caption_as_text(client, inbox):
    assert post(client, inbox, fixture_body("telegram", "photo_with_caption")).status_code == 200
    message = Message.objects.get()
    assert message.content == "The box arrived damaged"
    assert message.attachments == [
        {
            "type": "photo",
            "file_id": "AgACAgIAAxkBAAIBZ2ZmLarge",
            "file_unique_id": "AQADlarge",
            "file_size": 98211,
            "caption": "The box arrived damaged",
        }
    ]


def test_document_with_caption_keeps_file_name_and_type(client, inbox):
    assert post(client, inbox, fixture_body("telegram", "document_with_caption")).status_code == 200
    message = Message.objects.get()
    assert message.content == "Here is the invoice"
    [attachment] = message.attachments
    assert attachment["file_name"] == "invoice-1042.pdf"
    assert attachment["content_type"] == "application/pdf"
    assert "url" not in attachment  # a download URL would contain the bot token


def test_document_without_caption_gets_a_placeholder_text(client, inbox):
    assert post(client, inbox, fixture_body("telegram", "document_without_caption")).status_code == 200
    assert Message.objects.get().content == "[document: receipt.png]"


@pytest.mark.parametrize(
    "shape", ["edited_message", "my_chat_member", "callback_query", "group_new_chat_members"]
)
def test_non_message_update_is_ignored_and_starts_nothing(
    client, inbox, shape, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        response = post(client, inbox, fixture_body("telegram", shape))
    assert response.status_code == 200
    assert response.json()["status"] == "ignored"
    assert (Message.objects.count(), Conversation.objects.count(), Contact.objects.count()) == (0, 0, 0)
    assert not_realtime(callbacks) == []


def test_message_from_a_bot_is_ignored(client, inbox):
    update = json.loads(fixture_body("telegram", "text_message"))
    update["message"]["from"]["is_bot"] = True
    response = post(client, inbox, json.dumps(update).encode())
    assert response.json()["status"] == "ignored"
    assert Message.objects.count() == 0


def test_redelivered_update_is_a_200_no_op(client, inbox, django_capture_on_commit_callbacks):
    body = fixture_body("telegram", "text_message")
    post(client, inbox, body)
    with django_capture_on_commit_callbacks() as callbacks:
        response = post(client, inbox, body)
    assert response.status_code == 200
    assert response.json()["status"] == "duplicate"
    assert Message.objects.count() == 1
    assert not_realtime(callbacks) == []


# ---- the secret token --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "secret",
    [
        pytest.param(None, id="missing"),
        pytest.param("forged-secret", id="forged"),
        pytest.param(SECRET[:-1], id="truncated"),
        pytest.param("tenant-b-secret", id="other-tenants-secret"),
    ],
)
def test_wrong_secret_token_is_401_and_stores_nothing(client, inbox, secret):
    InboxFactory(channel_type=Inbox.ChannelType.TELEGRAM, secret="tenant-b-secret")
    response = post(client, inbox, fixture_body("telegram", "text_message"), secret=secret)
    assert response.status_code == 401
    assert response.json()["error"].startswith("signature")
    assert Message.objects.count() == 0


def test_api_inbox_token_does_not_open_the_telegram_route(client):
    api_inbox = InboxFactory(secret=SECRET)
    response = post(client, api_inbox, fixture_body("telegram", "text_message"))
    assert response.status_code == 404


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"{not json", id="not-json"),
        pytest.param(b"[]", id="array"),
        pytest.param(b'{"message": {"text": "hi"}}', id="no-update-id"),
        pytest.param(
            b'{"update_id": 1, "message": {"chat": {"id": "x"}, "text": "hi"}}', id="chat-id-string"
        ),
        pytest.param(b'{"update_id": 1, "message": "hi"}', id="message-not-object"),
    ],
)
def test_malformed_update_is_400_never_500(client, inbox, body):
    response = post(client, inbox, body)
    assert response.status_code == 400
    assert Message.objects.count() == 0


def test_oversized_update_is_refused_before_parsing(client, inbox, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 512
    response = post(client, inbox, fixture_body("telegram", "photo_with_caption"))
    assert (response.status_code, response.json()["error"]) == (400, "too_large")


# ---- sending -----------------------------------------------------------------------------------------------


def test_reply_is_sent_with_send_message_and_the_provider_id_is_kept(sending_inbox, provider, caplog):
    message = outgoing_message(sending_inbox, source_id=ANN_CHAT)
    with caplog.at_level(logging.INFO, logger="httpx"):
        assert message_deliver.apply(args=[message.id]).get() == "sent"
    assert "sendMessage" in caplog.text
    assert BOT_TOKEN not in caplog.text  # httpx logs request URLs; the token is redacted
    [request] = provider.requests
    assert request["path"] == f"/bot{BOT_TOKEN}/sendMessage"
    assert request["json"] == {"chat_id": int(ANN_CHAT), "text": "Your refund is on its way."}
    assert delivery_of(message).status == Delivery.Status.SENT
    assert delivery_of(message).provider_message_id == "1001"


def test_9000_character_reply_is_sent_as_three_messages_in_order(sending_inbox, provider):
    text = " ".join(f"w{i:04d}" for i in range(1500))  # 8,999 characters
    message = outgoing_message(sending_inbox, source_id=ANN_CHAT, content=text)
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    parts = provider.texts()
    assert len(parts) == 3
    assert all(len(part) <= telegram.TEXT_LIMIT for part in parts)
    assert " ".join(parts) == text
    assert delivery_of(message).provider_message_id == "1001,1002,1003"


def test_split_counts_utf16_units_like_telegram():
    parts = telegram.fit_text("😀" * 3000)  # 6,000 UTF-16 units
    assert [len(p) for p in parts] == [2048, 952]


def test_retry_after_a_failed_part_resumes_without_resending_earlier_parts(sending_inbox, provider):
    text = " ".join(f"w{i:04d}" for i in range(1500))
    message = outgoing_message(sending_inbox, source_id=ANN_CHAT, content=text)
    provider.script("/sendMessage", None, http_500())  # part 1 accepted, part 2 fails
    with pytest.raises(Retry):
        message_deliver(message.id)
    message.refresh_from_db()
    assert delivery_of(message).status == Delivery.Status.QUEUED
    assert delivery_of(message).provider_message_id == "1001"
    assert "part 2 of 3" in delivery_of(message).error
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    accepted = [
        text for text, status in zip(provider.texts(), provider.statuses(), strict=True) if status == 200
    ]
    assert len(provider.requests) == 4
    assert " ".join(accepted) == text  # each part reached the customer exactly once, in order


def test_rate_limit_429_is_retried_no_sooner_than_telegrams_retry_after(sending_inbox, provider, monkeypatch):
    provider.script("/sendMessage", telegram_retry_after(37))
    message = outgoing_message(sending_inbox, source_id=ANN_CHAT)
    backoffs = record_backoffs(monkeypatch)
    with pytest.raises(Retry):
        message_deliver(message.id)
    assert backoffs == [37.0]
    assert delivery_of(message).status == Delivery.Status.QUEUED
    assert "HTTP 429" in delivery_of(message).error


def test_server_error_is_retried(sending_inbox, provider):
    provider.script("/sendMessage", http_500())
    message = outgoing_message(sending_inbox, source_id=ANN_CHAT)
    with pytest.raises(Retry):
        message_deliver(message.id)
    assert delivery_of(message).status == Delivery.Status.QUEUED


def test_unreachable_bot_api_is_retried(inbox):
    inbox.provider_config = {"api_base_url": f"http://127.0.0.1:{free_port()}"}
    inbox.save()
    message = outgoing_message(inbox, source_id=ANN_CHAT)
    with pytest.raises(Retry):
        message_deliver(message.id)
    assert BOT_TOKEN not in delivery_of(message).error


def test_blocked_by_the_user_fails_for_good_tells_people_and_refunds(sending_inbox, provider):
    provider.script("/sendMessage", telegram_blocked())
    message = outgoing_message(sending_inbox, source_id=ANN_CHAT)
    CreditBalanceFactory(account=message.account, limit=10)
    assert credit_debit(message=message, assistant=None, agent_key="assistant")
    assert message_deliver.apply(args=[message.id]).get() == "failed"
    message.refresh_from_db()
    assert delivery_of(message).status == Delivery.Status.FAILED
    assert "bot was blocked by the user" in delivery_of(message).error
    activity = message.conversation.messages.get(message_type=Message.Type.ACTIVITY)
    assert "could not be delivered" in activity.content
    assert CreditBalance.objects.get(account=message.account).used == 0
    assert len(provider.requests) == 1  # never retried


def test_bad_bot_token_fails_for_good(sending_inbox, provider):
    provider.script("/sendMessage", telegram_unauthorized())
    message = outgoing_message(sending_inbox, source_id=ANN_CHAT)
    assert message_deliver.apply(args=[message.id]).get() == "failed"
    assert "Unauthorized" in delivery_of(message).error
    assert BOT_TOKEN not in delivery_of(message).error
