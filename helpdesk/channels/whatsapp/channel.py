"""`WhatsAppChannel`: the WhatsApp Cloud API as a `Channel` (helpdesk.channels.protocol)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import httpx

from ..base import DeliveryResult
from ..media import Download
from ..outbound_files import ANY_KIND, MB
from ..protocol import Received, SentParts, WebhookAnswer, WebhookRequest, not_supported, webhook_json
from ..provider_http import FileSender, send_in_parts
from .cloud_api import TEXT_LIMIT, fetch_media, fit_text, send
from .templates import send_template, sent_template
from .webhook import failed_statuses, handshake, parse, verify

if TYPE_CHECKING:
    from helpdesk.models import Inbox, Message


class WhatsAppChannel:
    """The WhatsApp Cloud API as a `Channel` (helpdesk.channels.protocol). A GET is Meta's subscription
    handshake (the verify token, then the bare challenge); a POST a signed notification, whose `failed`
    statuses are reported with its messages."""

    channel_type = "whatsapp"
    text_limit: int | None = TEXT_LIMIT
    supports_commands = False
    shows_quick_replies = True
    reply_window_hours: int | None = 24  # Meta's customer-service window
    shows_away_message = False
    fetches_media = True
    # Cloud API media: images 5 MB, audio 16 MB, documents 100 MB.
    file_limits: Mapping[str, int] = {"image": 5 * MB, "audio": 16 * MB, "file": 100 * MB, ANY_KIND: 100 * MB}
    files_total_limit: int | None = None
    request_limit: int | None = None

    def __init__(self, *, send_file: FileSender | None = None) -> None:
        # The files of a reply are sent by helpdesk.channels.whatsapp_files, which builds on this module; the
        # registry hands it in (an import here would close a loop). Without it a reply's files are not sent.
        self.send_file = send_file

    def verify(self, inbox: Inbox, request: WebhookRequest) -> None:
        if request.method == "GET":
            # The verify token is the handshake's only credential: a wrong one is a failed authentication.
            handshake(params=request.query, verify_token=str(inbox.provider_config.get("verify_token") or ""))
        else:
            verify(secret=inbox.secret, headers=request.headers, body=request.body)

    def parse(self, inbox: Inbox, request: WebhookRequest) -> Received:
        if request.method == "GET":
            # `verify` has checked the token and that a challenge is present. Meta expects the bare challenge.
            return Received(answer=WebhookAnswer(request.query["hub.challenge"]))
        payload = webhook_json(request.body)
        phone_number_id = str(inbox.provider_config.get("phone_number_id") or "")
        return Received(
            messages=parse(payload, phone_number_id=phone_number_id),
            # Not customer messages, but the only way Meta tells us a reply never arrived (e.g. 131047).
            failures=failed_statuses(payload, phone_number_id=phone_number_id),
        )

    def send(self, message: Message, *, timeout: float, parts: SentParts) -> DeliveryResult:
        template = sent_template(message)
        if template is not None:
            return send_template(message, template, timeout=timeout, parts=parts)
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
        return False  # a tap on a reply button or list row needs no acknowledgement
