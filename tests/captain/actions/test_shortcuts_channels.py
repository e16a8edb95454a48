"""Shortcuts from the customer's side: the command typed in each channel's real payload (Telegram, WhatsApp, Slack,
the API channel) through the real webhook views, answered by a real run against the scripted model over HTTP;
and the Telegram command menu set against a fake Bot API on 127.0.0.1."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from captain.actions.services.shortcuts import shortcut_create, shortcut_delete, shortcut_update
from captain.actions.tasks import sync_telegram_commands
from captain.answering.models import CreditBalance, CreditLedgerEntry, Run
from captain.answering.services.runs import run_for_message
from helpdesk.channels import api_channel, slack, telegram, whatsapp
from helpdesk.models import Inbox, Message
from tests.factories import AssistantInboxFactory, CreditBalanceFactory
from tests.support import fake_llm_server as fake
from tests.support.fake_provider import Answer, FakeProvider, telegram_unauthorized
from tests.support.on_commit import not_realtime
from tests.support.webhook_fixtures import fixture_json

pytestmark = pytest.mark.django_db

SECRET = "channel-secret_123"
BOT_TOKEN = "7000000001:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"


# ---- one customer message per channel, in the channel's own payload -------------------------------------------


@dataclass(frozen=True)
class Channel:
    kind: str
    post: Callable[[Any, Inbox, str], Any]
    provider_config: dict[str, Any]


def _telegram(client, inbox: Inbox, text: str):
    payload = copy.deepcopy(fixture_json("telegram", "text_message"))
    payload["message"]["text"] = text
    body = json.dumps(payload).encode()
    return client.post(
        f"/webhooks/telegram/{inbox.webhook_token}/",
        data=body,
        content_type="application/json",
        headers={telegram.SECRET_HEADER: SECRET},
    )


def _whatsapp(client, inbox: Inbox, text: str):
    payload = copy.deepcopy(fixture_json("whatsapp", "text_message"))
    payload["entry"][0]["changes"][0]["value"]["messages"][0]["text"]["body"] = text
    body = json.dumps(payload).encode()
    return client.post(
        f"/webhooks/whatsapp/{inbox.webhook_token}/",
        data=body,
        content_type="application/json",
        headers={whatsapp.SIGNATURE_HEADER: whatsapp.sign(SECRET, body)},
    )


def _slack(client, inbox: Inbox, text: str):
    payload = copy.deepcopy(fixture_json("slack", "message"))
    payload["event"]["text"] = text
    body = json.dumps(payload).encode()
    return client.post(
        f"/webhooks/slack/{inbox.webhook_token}/",
        data=body,
        content_type="application/json",
        headers=slack.signed_headers(SECRET, body),
    )


def _api(client, inbox: Inbox, text: str):
    body = json.dumps(
        {"message_id": "m-1", "contact": {"id": "cust-1", "name": "Ann"}, "text": text}
    ).encode()
    return client.post(
        f"/webhooks/api/{inbox.webhook_token}/",
        data=body,
        content_type="application/json",
        headers=api_channel.signed_headers(SECRET, body),
    )


CHANNELS = {
    "telegram": Channel(Inbox.ChannelType.TELEGRAM, _telegram, {}),
    "whatsapp": Channel(
        Inbox.ChannelType.WHATSAPP, _whatsapp, {"phone_number_id": "106540352242922", "verify_token": "v"}
    ),
    "slack": Channel(Inbox.ChannelType.SLACK, _slack, {"bot_user_id": "U0LAN0Z89"}),
    "api": Channel(Inbox.ChannelType.API, _api, {}),
}

# How customers type the same command on each channel: a Telegram group names the bot, a Chinese keyboard on
# WhatsApp gives the full-width slash, a Slack channel message starts with the bot's mention.
TRACK_TEXT = {
    "telegram": "/track@AcmeShopBot 12345",
    "whatsapp": "／track 12345",
    "slack": "<@U0LAN0Z89> /track order_id=12345",
    "api": '/track "12345"',
}


@pytest.fixture(params=sorted(CHANNELS))
def channel(request):
    return request.param


@pytest.fixture
def setup(channel, redis_url, llm_settings):
    spec = CHANNELS[channel]
    link = AssistantInboxFactory(
        inbox__channel_type=spec.kind,
        inbox__secret=SECRET,
        inbox__access_token=BOT_TOKEN,
        inbox__provider_config=spec.provider_config,
    )
    CreditBalanceFactory(account=link.assistant.account, limit=10)
    return link


def receive(client, channel: str, inbox: Inbox, text: str) -> Message:
    response = CHANNELS[channel].post(client, inbox, text)
    assert response.status_code == 200, response.content
    message = Message.objects.filter(message_type=Message.Type.INCOMING).latest("id")
    assert message.content == text
    return message


def test_a_message_shortcut_replies_with_its_text_and_charges_nothing(client, channel, setup, llm_settings):
    shortcut_create(
        assistant=setup.assistant,
        command="track",
        description="Track an order",
        parameters=[{"name": "order_id", "description": "Your order number", "required": True}],
        action="message",
        message_template="Order {order_id}: see https://acme.example/track/{order_id}",
    )
    message = receive(client, channel, setup.inbox, TRACK_TEXT[channel])

    assert run_for_message(message_id=message.id) == "reply"

    reply = Message.objects.get(message_type=Message.Type.OUTGOING, private=False)
    assert reply.content == "Order 12345: see https://acme.example/track/12345"
    assert llm_settings.requests == []  # no model call at all (not even the remember step)
    assert CreditLedgerEntry.objects.count() == 0
    assert CreditBalance.objects.get(account=setup.assistant.account).used == 0
    run = Run.objects.get()
    assert run.outcome == "reply" and run.credit_used is False


def test_a_missing_parameter_gets_the_form_without_the_model(client, channel, setup, llm_settings):
    shortcut_create(
        assistant=setup.assistant,
        command="track",
        description="Track an order",
        parameters=[{"name": "order_id", "description": "Your order number", "required": True}],
        action="message",
        message_template="Order {order_id}",
    )
    message = receive(client, channel, setup.inbox, "/track")

    assert run_for_message(message_id=message.id) == "reply"

    reply = Message.objects.get(message_type=Message.Type.OUTGOING, private=False)
    assert reply.content == "/track needs: order_id (Your order number)"
    assert llm_settings.requests == []
    assert CreditLedgerEntry.objects.count() == 0


def test_a_tool_shortcut_puts_the_tool_result_into_the_models_prompt(client, channel, setup, llm_settings):
    shortcut_create(
        assistant=setup.assistant,
        command="track",
        description="Track an order",
        parameters=[{"name": "order_id", "description": "Your order number", "required": True}],
        action="tool",
        tool_name="faq_lookup",
        tool_arguments={"query": "order {order_id}"},
    )
    llm_settings.push(fake.text("I could not find order 12345; a teammate can check it."))
    message = receive(client, channel, setup.inbox, TRACK_TEXT[channel])

    assert run_for_message(message_id=message.id) == "reply"

    (request,) = llm_settings.requests
    prompt = fake.system_prompt(request)
    assert (
        "The customer used the shortcut /track with order_id=12345. Result of faq_lookup:\n"
        "Nothing relevant was found in the knowledge base."
    ) in prompt
    assert fake.last_user_message(request) == TRACK_TEXT[channel]
    reply = Message.objects.get(message_type=Message.Type.OUTGOING, private=False)
    assert reply.content == "I could not find order 12345; a teammate can check it."
    assert CreditLedgerEntry.objects.count() == 1  # the model answered: an ordinary, billed reply


def test_an_unknown_command_is_an_ordinary_message(client, channel, setup, llm_settings):
    llm_settings.push(fake.text("How can I help?"))
    message = receive(client, channel, setup.inbox, "/start")

    assert run_for_message(message_id=message.id) == "reply"

    (request,) = llm_settings.requests
    assert "shortcut" not in fake.system_prompt(request)
    assert CreditLedgerEntry.objects.count() == 1


# ---- the Telegram command menu ----------------------------------------------------------------------------------


TELEGRAM_OK = Answer(200, {"ok": True, "result": True})  # what setMyCommands and deleteMyCommands answer


@pytest.fixture
def bot_api():
    with FakeProvider() as provider:
        yield provider


@pytest.fixture
def telegram_link(bot_api):
    return AssistantInboxFactory(
        inbox__channel_type=Inbox.ChannelType.TELEGRAM,
        inbox__secret=SECRET,
        inbox__access_token=BOT_TOKEN,
        inbox__provider_config={"api_base_url": bot_api.base_url},
    )


def test_saving_a_shortcut_queues_the_menu_sync_after_commit(
    telegram_link, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        shortcut = shortcut_create(
            assistant=telegram_link.assistant,
            command="hours",
            description="Opening hours",
            action="message",
            message_template="9 to 5",
        )
    assert len(not_realtime(callbacks)) == 1
    with django_capture_on_commit_callbacks() as callbacks:
        shortcut_update(shortcut=shortcut, description="When we are open")
    assert len(not_realtime(callbacks)) == 1
    with django_capture_on_commit_callbacks() as callbacks:
        shortcut_delete(shortcut=shortcut)
    assert len(not_realtime(callbacks)) == 1


def test_an_assistant_without_telegram_queues_nothing(django_capture_on_commit_callbacks):
    link = AssistantInboxFactory(inbox__channel_type=Inbox.ChannelType.API)
    with django_capture_on_commit_callbacks() as callbacks:
        shortcut_create(
            assistant=link.assistant,
            command="hours",
            description="Hours",
            action="message",
            message_template="x",
        )
    assert not_realtime(callbacks) == []


def test_the_sync_sets_the_enabled_commands_on_the_bot(telegram_link, bot_api):
    bot_api.script("/setMyCommands", TELEGRAM_OK)
    assistant = telegram_link.assistant
    for command, description in [("track", "Track an order"), ("hours", "Opening hours")]:
        shortcut_create(
            assistant=assistant,
            command=command,
            description=description,
            action="message",
            message_template="x",
        )
    shortcut_create(
        assistant=assistant,
        command="secret",
        description="Not listed",
        action="message",
        message_template="x",
        enabled=False,
    )

    assert sync_telegram_commands(assistant.id) == 1

    (request,) = bot_api.requests
    assert request["path"] == f"/bot{BOT_TOKEN}/setMyCommands"
    assert request["json"] == {
        "commands": [
            {"command": "hours", "description": "Opening hours"},
            {"command": "track", "description": "Track an order"},
        ]
    }


def test_no_shortcuts_left_clears_the_menu(telegram_link, bot_api):
    bot_api.script("/deleteMyCommands", TELEGRAM_OK)
    assert sync_telegram_commands(telegram_link.assistant.id) == 1
    assert bot_api.requests[0]["path"] == f"/bot{BOT_TOKEN}/deleteMyCommands"


def test_set_commands_keeps_within_telegrams_limits(telegram_link, bot_api):
    bot_api.script("/setMyCommands", TELEGRAM_OK)
    commands = [(f"c{i:03d}", f"Command {i}") for i in range(120)]
    commands[0] = ("Bad-Command", "refused by Telegram")
    commands[1] = ("x" * 33, "too long a command")
    commands[2] = ("long", "d" * 300)
    commands[3] = ("blank", "   ")

    result = telegram.set_commands(telegram_link.inbox, commands)

    assert result.ok
    sent = bot_api.requests[0]["json"]["commands"]
    assert len(sent) == 100
    assert all(1 <= len(c["command"]) <= 32 and c["command"].islower() for c in sent)
    assert all(1 <= len(c["description"]) <= 256 for c in sent)
    assert {"command": "long", "description": "d" * 256} in sent
    assert {"command": "blank", "description": "blank"} in sent
    assert not any(c["command"] in ("Bad-Command", "x" * 33) for c in sent)


def test_a_refused_sync_is_reported_without_the_token(telegram_link, bot_api, caplog):
    shortcut_create(
        assistant=telegram_link.assistant,
        command="hours",
        description="Hours",
        action="message",
        message_template="x",
    )
    bot_api.script("/setMyCommands", telegram_unauthorized())

    assert sync_telegram_commands(telegram_link.assistant.id) == 0

    assert "not set: Telegram HTTP 401" in caplog.text
    assert BOT_TOKEN not in caplog.text
