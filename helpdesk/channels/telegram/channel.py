"""`TelegramChannel`: the Telegram Bot API as a `Channel` (helpdesk.channels.protocol)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import httpx

from ..base import DeliveryResult
from ..media import Download
from ..outbound_files import ANY_KIND, MB
from ..protocol import Received, SentParts, WebhookRequest, webhook_json
from ..provider_http import FileSender, send_in_parts
from .bot_api import TEXT_LIMIT, answer_callback_query, fetch_media, fit_text, send, set_commands
from .webhook import parse, verify

if TYPE_CHECKING:
    from helpdesk.models import Inbox, Message


class TelegramChannel:
    """The Telegram Bot API as a `Channel` (helpdesk.channels.protocol): the only provider here with a
    command menu and with button taps to acknowledge."""

    channel_type = "telegram"
    text_limit: int | None = TEXT_LIMIT
    supports_commands = True
    shows_quick_replies = True
    reply_window_hours: int | None = None
    shows_away_message = False
    fetches_media = True
    # Bot API: sendDocument takes up to 50 MB (sendPhoto 10 MB: a larger image goes as a document).
    file_limits: Mapping[str, int] = {ANY_KIND: 50 * MB}
    files_total_limit: int | None = None
    request_limit: int | None = None

    def __init__(self, *, send_file: FileSender | None = None) -> None:
        # The files of a reply are sent by helpdesk.channels.telegram_files, which builds on this module; the
        # registry hands it in (an import here would close a loop). Without it a reply's files are not sent.
        self.send_file = send_file

    def verify(self, inbox: Inbox, request: WebhookRequest) -> None:
        verify(secret=inbox.secret, headers=request.headers)

    def parse(self, inbox: Inbox, request: WebhookRequest) -> Received:
        return Received(messages=parse(webhook_json(request.body)))

    def send(self, message: Message, *, timeout: float, parts: SentParts) -> DeliveryResult:
        return send_in_parts(
            message, parts=parts, timeout=timeout, fit_text=fit_text, send_part=send, send_file=self.send_file
        )

    def fetch_media(self, client: httpx.Client, inbox: Inbox, provider_ref: str) -> Download:
        return fetch_media(client, inbox, provider_ref)

    def set_commands(
        self, inbox: Inbox, commands: Sequence[tuple[str, str]], *, timeout: float = 10.0
    ) -> DeliveryResult:
        return set_commands(inbox, commands, timeout=timeout)

    def answer_callback(
        self, inbox: Inbox, callback_id: str, *, text: str = "", timeout: float = 5.0
    ) -> bool:
        return answer_callback_query(inbox, callback_id, text=text, timeout=timeout)
