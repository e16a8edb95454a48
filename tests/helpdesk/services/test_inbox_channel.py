"""helpdesk.services.inbox_channel: the AI's way to a channel's features (captain never imports the channels).
The limits are the ones the AI was told before the Channel protocol: Telegram's and WhatsApp's 4096, a Slack
section block's 3000, none on the API channel."""

from __future__ import annotations

import pytest

from helpdesk.models import Inbox
from helpdesk.services.inbox_channel import (
    command_menu_channel_types,
    inbox_set_commands,
    message_text_limit,
)
from tests.support.fake_provider import Answer, FakeProvider


@pytest.fixture
def provider():
    with FakeProvider() as fake:
        yield fake


@pytest.mark.parametrize(
    ("channel_type", "limit"), [("api", None), ("telegram", 4096), ("whatsapp", 4096), ("slack", 3000)]
)
def test_message_text_limit_per_channel_type(channel_type, limit):
    assert message_text_limit(channel_type=channel_type) == limit


def test_an_unknown_channel_type_has_no_limit_to_tell():
    assert message_text_limit(channel_type="fax") is None


def test_only_telegram_inboxes_have_a_command_menu():
    assert command_menu_channel_types() == frozenset({Inbox.ChannelType.TELEGRAM})


def test_inbox_set_commands_goes_to_the_inboxs_channel(provider):
    provider.script("/deleteMyCommands", Answer(200, {"ok": True, "result": True}))
    telegram = Inbox(
        channel_type="telegram", access_token="7:tok", provider_config={"api_base_url": provider.base_url}
    )
    whatsapp = Inbox(
        channel_type="whatsapp", access_token="tok", provider_config={"api_base_url": provider.base_url}
    )

    assert inbox_set_commands(telegram, []).ok
    assert [r["path"] for r in provider.requests] == ["/bot7:tok/deleteMyCommands"]

    refused = inbox_set_commands(whatsapp, [("track", "Track an order")])
    assert (refused.ok, refused.permanent, refused.error) == (
        False,
        True,
        "This channel has no command menu.",
    )
    assert len(provider.requests) == 1
