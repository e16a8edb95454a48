"""Shared set-up for the CSAT tests: one inbox per channel (pointed at a fake provider or callback receiver on
127.0.0.1), a resolved conversation with its rating request, and delivering queued messages."""

from __future__ import annotations

from typing import Any

import pytest

from helpdesk.models import Conversation, Delivery, Inbox, Message
from helpdesk.services.conversations import conversation_set_status
from tests.factories import AssistantInboxFactory, ConversationFactory, MessageFactory
from tests.support.callback_receiver import CallbackReceiver
from tests.support.fake_provider import FakeProvider

TG_TOKEN = "7000000001:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
TG_SECRET = "tg_secret-token-123"
TG_CHAT = "5112233445"  # the chat of tests/fixtures/webhooks/telegram/*.json
WA_SECRET = "d6f1c0ffee0ddba11c0ffee0ddba11c0"
WA_PHONE_NUMBER_ID = "106540352242922"
SHEENA = "16505551234"  # the sender of tests/fixtures/webhooks/whatsapp/*.json
SLACK_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
DM_CONTACT = (
    "D0LAN2Q65:U061F7AUR"  # the channel and user of tests/fixtures/webhooks/slack_interactivity/*.json
)
API_CONTACT = "customer-7"


@pytest.fixture
def provider():
    with FakeProvider() as fake:
        yield fake


@pytest.fixture
def receiver():
    with CallbackReceiver() as server:
        yield server


def _inbox(**fields: Any) -> Inbox:
    return AssistantInboxFactory(
        inbox__csat_survey_enabled=True, **{f"inbox__{k}": v for k, v in fields.items()}
    ).inbox


@pytest.fixture
def telegram_inbox(provider: FakeProvider) -> Inbox:
    return _inbox(
        channel_type=Inbox.ChannelType.TELEGRAM,
        secret=TG_SECRET,
        access_token=TG_TOKEN,
        provider_config={"api_base_url": provider.base_url},
    )


@pytest.fixture
def whatsapp_inbox(provider: FakeProvider) -> Inbox:
    return _inbox(
        channel_type=Inbox.ChannelType.WHATSAPP,
        secret=WA_SECRET,
        access_token="EAAGm0PX4ZCpsBAKZCZA0ZD",
        provider_config={"phone_number_id": WA_PHONE_NUMBER_ID, "api_base_url": provider.base_url},
    )


@pytest.fixture
def slack_inbox(provider: FakeProvider) -> Inbox:
    return _inbox(
        channel_type=Inbox.ChannelType.SLACK,
        secret=SLACK_SECRET,
        access_token="xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy",
        provider_config={"bot_user_id": "U0LAN0Z89", "api_base_url": provider.base_url},
    )


@pytest.fixture
def api_inbox(receiver: CallbackReceiver) -> Inbox:
    return _inbox(callback_url=receiver.url)


def conversation_with_customer(inbox: Inbox, source_id: str) -> Conversation:
    """A conversation the customer wrote in and the AI answered (nothing queued for delivery)."""
    conversation = ConversationFactory(contact_inbox__inbox=inbox, contact_inbox__source_id=source_id)
    MessageFactory(conversation=conversation, content="Where is my refund?")
    MessageFactory(
        conversation=conversation,
        message_type=Message.Type.OUTGOING,
        sender_type=Message.SenderType.ASSISTANT,
        content="It reaches your card within 5 working days.",
    )
    return conversation


def resolve(conversation: Conversation, capture) -> Conversation:
    """Resolve through the service and run its after-commit work (the rating request). What that work queues
    after ITS commit (publishing the delivery task) is captured and not run: tests deliver with
    `message_deliver.apply`, and no worker listens to the test broker."""
    with capture() as after_resolution:
        conversation_set_status(
            conversation=conversation, status=Conversation.Status.RESOLVED, actor="The AI"
        )
    with capture():
        for callback in after_resolution:
            callback()
    conversation.refresh_from_db()
    return conversation


def outgoing_system(conversation: Conversation):
    """What the helpdesk itself sent the customer (activities are system messages too, but never sent)."""
    return Message.objects.filter(
        conversation=conversation, message_type=Message.Type.OUTGOING, sender_type=Message.SenderType.SYSTEM
    ).order_by("id")


def rating_request(conversation: Conversation) -> Message:
    return outgoing_system(conversation).get()


def queued(conversation: Conversation) -> list[Message]:
    return list(
        Message.objects.filter(conversation=conversation, delivery__status=Delivery.Status.QUEUED).order_by(
            "id"
        )
    )
