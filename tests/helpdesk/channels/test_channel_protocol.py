"""The `Channel` protocol (helpdesk.channels.protocol) and its registry: one implementation per channel type,
each with every operation, and what a channel without an operation answers (nothing sent to the provider)."""

from __future__ import annotations

import inspect

import httpx
import pytest

from helpdesk.channels.media import Refused
from helpdesk.channels.protocol import Channel, WebhookRequest
from helpdesk.channels.registry import UnknownChannel, all_channels, channel_for, channel_for_type
from helpdesk.models import Inbox
from tests.support.fake_provider import Answer, FakeProvider
from tests.support.webhook_fixtures import fixture_body

BOT_TOKEN = "7000000001:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
OPERATIONS = ("verify", "parse", "send", "fetch_media", "set_commands", "answer_callback")
ATTRIBUTES = (
    "channel_type",
    "text_limit",
    "supports_commands",
    "shows_quick_replies",
    "fetches_media",
    "file_limits",
    "files_total_limit",
    "request_limit",
)


@pytest.fixture
def provider():
    with FakeProvider() as fake:
        yield fake


def inbox_of(channel_type: str, provider: FakeProvider | None = None) -> Inbox:
    config = {"api_base_url": provider.base_url} if provider else {}
    return Inbox(channel_type=channel_type, access_token=BOT_TOKEN, secret="s", provider_config=config)


def test_every_channel_type_has_exactly_one_channel():
    assert sorted(channel.channel_type for channel in all_channels()) == sorted(Inbox.ChannelType.values)
    for channel_type in Inbox.ChannelType.values:
        channel = channel_for(inbox_of(channel_type))
        assert channel.channel_type == channel_type
        assert channel is channel_for_type(channel_type)


def test_an_unknown_channel_type_is_refused_by_name():
    with pytest.raises(UnknownChannel, match="'fax'"):
        channel_for(inbox_of("fax"))
    assert issubclass(UnknownChannel, LookupError)


@pytest.mark.parametrize("channel", all_channels(), ids=lambda c: c.channel_type)
def test_each_channel_implements_every_operation_itself(channel: Channel):
    assert isinstance(channel, Channel)
    assert set(OPERATIONS + ATTRIBUTES) <= set(vars(type(channel)))
    for name in OPERATIONS:
        # Same parameters as the protocol, so a caller never needs to know which channel it holds.
        expected = list(inspect.signature(getattr(Channel, name)).parameters)[1:]
        assert list(inspect.signature(getattr(channel, name)).parameters) == expected, name


def test_the_ai_is_told_each_channels_message_size():
    # Telegram and WhatsApp refuse texts over 4096 characters; Slack's section block holds 3000 (a reply with
    # buttons goes as sections); the API channel's integration takes any length; an e-mail is a letter, longer
    # than any chat message (nothing is cut when sent).
    assert {c.channel_type: c.text_limit for c in all_channels()} == {
        "api": None,
        "telegram": 4096,
        "whatsapp": 4096,
        "slack": 3000,
        "widget": None,
        "email": 10_000,
    }


def test_only_telegram_has_a_command_menu_and_the_api_channel_no_files():
    assert {c.channel_type for c in all_channels() if c.supports_commands} == {"telegram"}
    assert {c.channel_type for c in all_channels() if not c.fetches_media} == {"api", "widget", "email"}


def test_every_channel_but_e_mail_shows_quick_replies_as_buttons():
    assert {c.channel_type for c in all_channels() if not c.shows_quick_replies} == {"email"}


@pytest.mark.parametrize("channel_type", ["api", "whatsapp", "slack"])
def test_set_commands_without_a_command_menu_sends_nothing(channel_type, provider):
    inbox = inbox_of(channel_type, provider)

    result = channel_for(inbox).set_commands(inbox, [("track", "Track an order")])

    assert not result.ok
    assert result.permanent
    assert result.error == "This channel has no command menu."
    assert provider.requests == []


@pytest.mark.parametrize("channel_type", ["api", "whatsapp", "slack"])
def test_answer_callback_without_taps_to_acknowledge_sends_nothing(channel_type, provider):
    inbox = inbox_of(channel_type, provider)

    assert channel_for(inbox).answer_callback(inbox, "4382bfdwdsb323b2e1", text="⭐") is False
    assert provider.requests == []


def test_the_api_channel_refuses_to_fetch_media():
    inbox = inbox_of("api")
    with httpx.Client() as client, pytest.raises(Refused, match="no provider API to fetch files from"):
        channel_for(inbox).fetch_media(client, inbox, "file-1")


def test_telegram_sets_its_command_menu(provider):
    provider.script("/setMyCommands", Answer(200, {"ok": True, "result": True}))
    inbox = inbox_of("telegram", provider)

    result = channel_for(inbox).set_commands(inbox, [("track", "Track an order")])

    assert result.ok
    (request,) = provider.requests
    assert request["path"] == f"/bot{BOT_TOKEN}/setMyCommands"
    assert request["json"] == {"commands": [{"command": "track", "description": "Track an order"}]}


def test_telegram_answers_the_rating_tap_its_parse_reported(provider):
    provider.script("/answerCallbackQuery", Answer(200, {"ok": True, "result": True}))
    inbox = inbox_of("telegram", provider)
    channel = channel_for(inbox)
    request = WebhookRequest(method="POST", headers={}, body=fixture_body("telegram", "callback_query_csat"))

    (tap,) = channel.parse(inbox, request).messages
    assert tap.callback_id == "4382bfdwdsb323b2e1"
    assert channel.answer_callback(inbox, tap.callback_id, text="⭐⭐⭐⭐") is True

    (answered,) = provider.requests
    assert answered["path"] == f"/bot{BOT_TOKEN}/answerCallbackQuery"
    assert answered["json"] == {"callback_query_id": "4382bfdwdsb323b2e1", "text": "⭐⭐⭐⭐"}


def test_an_ordinary_message_is_no_tap_to_answer():
    inbox = inbox_of("telegram")
    request = WebhookRequest(method="POST", headers={}, body=fixture_body("telegram", "text_message"))
    (message,) = channel_for(inbox).parse(inbox, request).messages
    assert message.callback_id == ""
