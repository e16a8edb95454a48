"""`SlackChannel`: the Slack Events API as a `Channel` (helpdesk.channels.protocol)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import httpx

from ..base import DeliveryResult
from ..media import Download
from ..outbound_files import ANY_KIND, MB
from ..protocol import Received, SentParts, WebhookAnswer, WebhookRequest, not_supported, webhook_json
from ..provider_http import FileSender, send_in_parts
from .blocks import SECTION_TEXT_LIMIT
from .web_api import fetch_media, fit_text, send
from .webhook import interaction_body, parse, parse_interaction, url_verification_challenge, verify

if TYPE_CHECKING:
    from helpdesk.models import Inbox, Message


class SlackChannel:
    """The Slack Events API as a `Channel` (helpdesk.channels.protocol). One URL takes events (a signed
    url_verification is answered with its challenge) and interactivity requests (taps on our buttons)."""

    channel_type = "slack"
    text_limit: int | None = SECTION_TEXT_LIMIT
    supports_commands = False
    shows_quick_replies = True
    reply_window_hours: int | None = None
    shows_away_message = False
    fetches_media = True
    # files.getUploadURLExternal: up to 1 GB (we keep no file over outbound_files.STORE_LIMIT).
    file_limits: Mapping[str, int] = {ANY_KIND: 1000 * MB}
    files_total_limit: int | None = None
    request_limit: int | None = None

    def __init__(self, *, send_file: FileSender | None = None) -> None:
        # The files of a reply are sent by helpdesk.channels.slack_files, which builds on this module; the
        # registry hands it in (an import here would close a loop). Without it a reply's files are not sent.
        self.send_file = send_file

    def verify(self, inbox: Inbox, request: WebhookRequest) -> None:
        verify(secret=inbox.secret, headers=request.headers, body=request.body)

    def parse(self, inbox: Inbox, request: WebhookRequest) -> Received:
        interaction = interaction_body(request.body, content_type=request.content_type)
        if interaction is not None:
            # A tap on a quick-reply button (the Interactivity Request URL is this one), verified like an event.
            return Received(messages=parse_interaction(webhook_json(interaction)))
        payload = webhook_json(request.body)
        challenge = url_verification_challenge(payload)
        if challenge is not None:
            # Only reached with a valid signature: the challenge proves to Slack that this URL is ours.
            return Received(answer=WebhookAnswer({"challenge": challenge}))
        return Received(
            messages=parse(payload, bot_user_id=str(inbox.provider_config.get("bot_user_id") or ""))
        )

    def send(self, message: Message, *, timeout: float, parts: SentParts) -> DeliveryResult:
        return send_in_parts(
            message, parts=parts, timeout=timeout, fit_text=fit_text, send_part=send, send_file=self.send_file
        )

    def fetch_media(self, client: httpx.Client, inbox: Inbox, provider_ref: str) -> Download:
        return fetch_media(client, inbox, provider_ref)

    def set_commands(
        self, inbox: Inbox, commands: Sequence[tuple[str, str]], *, timeout: float = 10.0
    ) -> DeliveryResult:
        return not_supported("command menu")

    def answer_callback(
        self, inbox: Inbox, callback_id: str, *, text: str = "", timeout: float = 5.0
    ) -> bool:
        return False  # an interactivity request is acknowledged by answering it 200
