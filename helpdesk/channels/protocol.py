"""The `Channel` protocol: everything the rest of the helpdesk asks of an inbox's channel, whichever it is.

Each provider module (api_channel, telegram, whatsapp, slack) ends with one implementation; `channel_for(inbox)`
(helpdesk.channels.registry) picks it. The webhook views, the outbox, the services and, through helpdesk
services, the AI call these methods and never a provider module, so a provider's behaviour lives in its module
alone.

What a channel does not have is part of the protocol too, answered at once without a request:
- `set_commands` (a command menu): a permanent `not_supported` DeliveryResult; `supports_commands` is False;
- `answer_callback` (acknowledging a button tap): False;
- `fetch_media` (files to fetch from the provider): `Refused`; `fetches_media` is False;
- `text_limit`: None (nothing the AI needs to be told).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import httpx

from helpdesk.conf import helpdesk_setting

from .base import DeliveryResult, FailedStatus, InboundMessage, parse_json_body
from .media import Download

if TYPE_CHECKING:
    from helpdesk.models import Inbox, Message


@dataclass(frozen=True)
class WebhookRequest:
    """A webhook request as a channel sees it: the raw body (its signature covers these exact bytes)."""

    method: str
    headers: Mapping[str, str]
    """Case-insensitive (Django's request.headers)."""
    body: bytes
    query: Mapping[str, str] = field(default_factory=dict)
    content_type: str = ""


@dataclass(frozen=True)
class WebhookAnswer:
    """What the provider expects back instead of stored messages (a subscription handshake's challenge)."""

    body: str | dict[str, Any]
    """A dict is answered as JSON, a str as text/plain."""


@dataclass(frozen=True)
class Received:
    """What one authenticated webhook request carried."""

    messages: list[InboundMessage] = field(default_factory=list)
    """Customer messages (none: an event that is not one, answered `ignored`)."""
    failures: list[FailedStatus] = field(default_factory=list)
    """The provider's later verdicts that messages we sent were not delivered."""
    answer: WebhookAnswer | None = None
    """Set when the request is a handshake: answered as it says, nothing stored."""


class SentParts(Protocol):
    """A delivery's progress through a reply sent in several parts (a channel's length limit): a retry
    resumes after the parts the provider already accepted instead of sending them twice."""

    @property
    def count(self) -> int:
        """How many parts were accepted before this attempt."""
        ...

    def record(self, provider_message_id: str) -> None:
        """Record one more accepted part (at once: it reached the customer whatever happens next)."""
        ...


@runtime_checkable
class Channel(Protocol):
    """One provider's channel. Stateless: every call gets the inbox (its secret, token, provider_config)."""

    channel_type: str
    """The `Inbox.ChannelType` value it serves."""
    text_limit: int | None
    """Characters one outgoing message holds, as the AI is told so its replies fit (longer replies are split
    or shortened by `send`, which reads badly in a chat); None: no limit worth telling."""
    supports_commands: bool
    """Whether `set_commands` sets a command menu."""
    shows_quick_replies: bool
    """Whether a message's quick replies reach the customer as buttons (a letter leaves them out)."""
    reply_window_hours: int | None
    """How long after the customer's last message a free-text reply may be sent; after it only an approved message
    template (WhatsApp: 24 hours). None: any time."""
    shows_away_message: bool
    """Whether the customer sees the inbox's away message without being sent one (the widget's page shows it):
    then no out-of-office message is posted (helpdesk.services.out_of_office)."""
    fetches_media: bool
    """Whether its messages report files that `fetch_media` can fetch."""
    file_limits: Mapping[str, int]
    """The largest file a reply may carry, in bytes, per kind (image, audio, file; `outbound_files.ANY_KIND` for
    the rest): the provider's documented limit for what a bot sends (helpdesk.channels.outbound_files)."""
    files_total_limit: int | None
    """What all of one reply's files may weigh together (a mail carries them in one message); None: no limit."""
    request_limit: int | None
    """The largest webhook request it takes, in bytes, when a message can carry more than the server's
    HELPDESK_MAX_BODY_BYTES (a mail with its attachments); None: that setting."""

    def verify(self, inbox: Inbox, request: WebhookRequest) -> None:
        """Raise WebhookRejected (401/403, 400 for a malformed handshake) unless the request comes from the
        provider."""
        ...

    def parse(self, inbox: Inbox, request: WebhookRequest) -> Received:
        """What a verified request carried; WebhookRejected(400) for a malformed one."""
        ...

    def send(self, message: Message, *, timeout: float, parts: SentParts) -> DeliveryResult:
        """Send an outgoing message (fetched with its inbox and its conversation's contact) to the customer,
        fitted to the channel's length limit; the result is for the delivery task's retry policy."""
        ...

    def fetch_media(self, client: httpx.Client, inbox: Inbox, provider_ref: str) -> Download:
        """Ask the provider where the file `provider_ref` (as `parse` reported it) is, through `client` (the
        outbound policy's); raise Failed or Refused (helpdesk.channels.media)."""
        ...

    def set_commands(
        self, inbox: Inbox, commands: Sequence[tuple[str, str]], *, timeout: float = 10.0
    ) -> DeliveryResult:
        """Replace the command menu with `(command, description)` pairs, within the provider's limits; an
        empty list clears it."""
        ...

    def answer_callback(
        self, inbox: Inbox, callback_id: str, *, text: str = "", timeout: float = 5.0
    ) -> bool:
        """Acknowledge the button tap `callback_id` (InboundMessage.callback_id), showing `text` briefly; True
        when the provider took it. Best effort."""
        ...


def not_supported(feature: str) -> DeliveryResult:
    """The answer of an operation the channel does not have: permanent, and nothing was sent."""
    return DeliveryResult(ok=False, permanent=True, error=f"This channel has no {feature}.")


def webhook_json(body: bytes) -> Any:
    """A webhook body decoded as JSON (helpdesk.channels.base.parse_json_body), as deep as the settings allow."""
    return parse_json_body(body, max_depth=helpdesk_setting("WEBHOOK_MAX_JSON_DEPTH"))
