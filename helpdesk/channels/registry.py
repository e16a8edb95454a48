"""`channel_for(inbox)`: the inbox's `Channel` (helpdesk.channels.protocol), one per `Inbox.ChannelType`.

The one place outside a provider module that names the providers: everything else asks the registry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import api_channel, slack, slack_files, telegram, telegram_files, whatsapp, whatsapp_files
from .email import EmailChannel
from .protocol import Channel
from .whatsapp.templates import RemoteTemplate, list_templates
from .widget import WidgetChannel

if TYPE_CHECKING:
    from collections.abc import Callable

    from helpdesk.models import Inbox


class UnknownChannel(LookupError):
    """No channel serves this channel type (a value no `Inbox.ChannelType` has)."""


_CHANNELS: dict[str, Channel] = {
    channel.channel_type: channel
    for channel in (
        api_channel.ApiChannel(),
        telegram.TelegramChannel(send_file=telegram_files.send_file),
        whatsapp.WhatsAppChannel(send_file=whatsapp_files.send_file),
        slack.SlackChannel(send_file=slack_files.send_file),
        WidgetChannel(),
        EmailChannel(),
    )
}


def channel_for_type(channel_type: str) -> Channel:
    """The channel serving `channel_type`; UnknownChannel for any other value."""
    try:
        return _CHANNELS[channel_type]
    except KeyError:
        raise UnknownChannel(f"No channel serves channel type {channel_type!r}.") from None


def channel_for(inbox: Inbox) -> Channel:
    """The inbox's channel; UnknownChannel when its channel type has none."""
    return channel_for_type(inbox.channel_type)


# Channels whose replies outside their reply window must be an approved template, and how each lists them.
_TEMPLATE_LISTS: dict[str, Callable[[Inbox], list[RemoteTemplate]]] = {
    whatsapp.WhatsAppChannel.channel_type: list_templates,
}


def message_templates(inbox: Inbox) -> list[RemoteTemplate]:
    """The message templates the inbox's provider holds (WhatsApp: the business account's); UnknownChannel for a
    channel without templates. Raises helpdesk.channels.media.Failed when the provider cannot be read."""
    lister = _TEMPLATE_LISTS.get(inbox.channel_type)
    if lister is None:
        raise UnknownChannel(f"Channel type {inbox.channel_type!r} has no message templates.")
    return lister(inbox)


def all_channels() -> tuple[Channel, ...]:
    """Every channel, in a fixed order."""
    return tuple(_CHANNELS.values())
