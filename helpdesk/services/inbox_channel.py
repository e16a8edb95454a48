"""What a plug-in (the AI) may ask of an inbox's channel without knowing its provider.

captain never imports helpdesk.channels: it reaches a channel's features through these, which ask the inbox's
`Channel` (helpdesk.channels.registry.channel_for).
"""

from __future__ import annotations

from collections.abc import Sequence

from helpdesk.channels.base import DeliveryResult
from helpdesk.channels.registry import UnknownChannel, all_channels, channel_for, channel_for_type
from helpdesk.models import Inbox


def message_text_limit(*, channel_type: str) -> int | None:
    """Characters one outgoing message holds on this channel type, for the AI to keep its replies within (a
    longer one is split or shortened, which reads badly in a chat); None: no limit worth telling, or a
    channel type no channel serves."""
    try:
        return channel_for_type(channel_type).text_limit
    except UnknownChannel:
        return None


def shows_quick_replies(*, channel_type: str) -> bool:
    """Whether quick replies reach this channel type's customers as buttons (False for a channel type no channel
    serves)."""
    try:
        return channel_for_type(channel_type).shows_quick_replies
    except UnknownChannel:
        return False


def command_menu_channel_types() -> frozenset[str]:
    """The channel types whose inboxes have a command menu (`inbox_set_commands` sets it)."""
    return frozenset(channel.channel_type for channel in all_channels() if channel.supports_commands)


def inbox_set_commands(
    inbox: Inbox, commands: Sequence[tuple[str, str]], *, timeout: float = 10.0
) -> DeliveryResult:
    """Replace the inbox's command menu with `(command, description)` pairs (none: clear it); the channel
    applies its provider's limits. On a channel without a command menu: a permanent "not supported", nothing
    sent."""
    return channel_for(inbox).set_commands(inbox, commands, timeout=timeout)
