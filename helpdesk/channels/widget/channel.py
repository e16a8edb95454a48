"""The website chat widget as a `Channel` (helpdesk.channels.protocol).

Inbound is the public visitor API (helpdesk.api.widget): `verify` checks the page's origin against the inbox's
allowed origins and the visitor token; `parse` turns `{"id": "<the page's id for the message>", "text": "..."}`
into one InboundMessage of that visitor, `parse_file_message` a visitor's file (with an optional caption). The message id is the page's own (a retry of the same send is stored
once), prefixed with the visitor's source id so one visitor cannot collide with another's ids.

Outbound needs no provider: a reply is stored like any other and the visitor's page, which listens on the
visitor event stream, fetches it. `send` therefore only confirms (or also mails an answer to a question asked
outside business hours: follow_up.py); there is no command menu, no button taps to
acknowledge and no provider files to fetch.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import httpx
from rest_framework import serializers

from ..base import DeliveryResult, InboundContact, InboundMessage, ReceivedFile, WebhookRejected
from ..media import Download, Refused
from ..outbound_files import ANY_KIND, OWN_LIMIT
from ..protocol import Received, SentParts, WebhookRequest, not_supported, webhook_json
from .follow_up import follow_up_by_email
from .identity import VISITOR_HEADER, checked_origin, visitor_source_id

if TYPE_CHECKING:
    from helpdesk.models import Inbox, Message

MAX_TEXT_LENGTH = 5000


class _MessageSerializer(serializers.Serializer):
    id = serializers.RegexField(r"^[A-Za-z0-9_-]{1,64}$")
    text = serializers.CharField(max_length=MAX_TEXT_LENGTH)


def parse_message(*, source_id: str, payload: object) -> InboundMessage:
    if not isinstance(payload, dict):
        raise WebhookRejected(400, "invalid_payload", "Body must be a JSON object.")
    serializer = _MessageSerializer(data=payload)
    if not serializer.is_valid():
        raise WebhookRejected(400, "invalid_payload", json.dumps(serializer.errors))
    data = serializer.validated_data
    return InboundMessage(
        provider_message_id=f"{source_id}/{data['id']}",
        contact=InboundContact(source_id=source_id),
        text=data["text"],
    )


class _FileMessageSerializer(serializers.Serializer):
    id = serializers.RegexField(r"^[A-Za-z0-9_-]{1,64}$")
    text = serializers.CharField(max_length=MAX_TEXT_LENGTH, required=False, allow_blank=True, default="")


def parse_file_message(*, source_id: str, fields: Mapping[str, str], file: ReceivedFile) -> InboundMessage:
    """A visitor's file (`POST files/`: the form's `id`, an optional caption `text`, and the file), as one message
    whose file arrives inside it: checked and stored at ingest like an e-mail's attachment."""
    serializer = _FileMessageSerializer(data=dict(fields))
    if not serializer.is_valid():
        raise WebhookRejected(400, "invalid_payload", json.dumps(serializer.errors))
    data = serializer.validated_data
    # A name in the page's encoding may hold NUL or lone surrogates, which no database stores.
    name = file.file_name.encode("utf-8", "replace").decode("utf-8").replace("\x00", "")[:255]
    return InboundMessage(
        provider_message_id=f"{source_id}/{data['id']}",
        contact=InboundContact(source_id=source_id),
        text=data["text"],
        files=(ReceivedFile(file_name=name, content_type=file.content_type[:100], data=file.data),),
    )


class WidgetChannel:
    """The website chat widget."""

    channel_type = "widget"
    text_limit: int | None = None
    supports_commands = False
    shows_quick_replies = True
    reply_window_hours: int | None = None
    shows_away_message = True  # its page shows the inbox's away message itself
    fetches_media = False
    # The chat shows links to the files; we serve them ourselves.
    file_limits: Mapping[str, int] = {ANY_KIND: OWN_LIMIT}
    files_total_limit: int | None = None
    request_limit: int | None = None

    def verify(self, inbox: Inbox, request: WebhookRequest) -> None:
        checked_origin(inbox, request.headers)
        visitor_source_id(inbox, request.headers.get(VISITOR_HEADER, ""))

    def parse(self, inbox: Inbox, request: WebhookRequest) -> Received:
        source_id = visitor_source_id(inbox, request.headers.get(VISITOR_HEADER, ""))
        return Received(messages=[parse_message(source_id=source_id, payload=webhook_json(request.body))])

    def send(self, message: Message, *, timeout: float, parts: SentParts) -> DeliveryResult:
        # Stored is delivered: the visitor's page reads it through the visitor API when its stream says so. An
        # answer to a question asked away-hours also goes by e-mail (follow_up).
        return follow_up_by_email(message, timeout=timeout)

    def fetch_media(self, client: httpx.Client, inbox: Inbox, provider_ref: str) -> Download:
        raise Refused("the widget has no provider API to fetch files from")

    def set_commands(
        self, inbox: Inbox, commands: Sequence[tuple[str, str]], *, timeout: float = 10.0
    ) -> DeliveryResult:
        return not_supported("command menu")

    def answer_callback(
        self, inbox: Inbox, callback_id: str, *, text: str = "", timeout: float = 5.0
    ) -> bool:
        return False  # a suggestion tapped in the widget comes back as an ordinary message
