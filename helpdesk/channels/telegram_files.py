"""Telegram: sending the files a person attached to a reply (helpdesk.channels.outbound_files).

Each file is one message after the reply's text, uploaded as multipart/form-data (Bot API "Sending files"):
`sendPhoto` for a JPEG, PNG or WebP image up to 10 MB (shown inline; one Telegram refuses as a photo goes again
as a document), `sendDocument` for anything else, up to
the 50 MB bots may send (checked when the reply was written). Telegram's answer is classified as a text part's
is (`telegram.classify`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import DeliveryResult
from .outbound_files import OutboundFile
from .provider_http import SendResult, post_form
from .telegram.bot_api import DEFAULT_API_BASE_URL, _chat_id, classify

if TYPE_CHECKING:
    from helpdesk.models import Inbox

PHOTO_TYPES = frozenset({"image/jpeg", "image/png", "image/webp"})
PHOTO_LIMIT = 10 * 1000 * 1000


def _upload(
    url: str, chat_id: str, field: str, file: OutboundFile, data: bytes, timeout: float
) -> SendResult:
    answer = post_form(
        url,
        fields={"chat_id": chat_id},
        files={field: (file.file_name, data, file.content_type)},
        headers={},
        timeout=timeout,
    )
    if isinstance(answer, DeliveryResult):
        return SendResult(answer)
    return classify(answer)


def send_file(*, inbox: Inbox, source_id: str, file: OutboundFile, timeout: float) -> SendResult:
    """Send one file of the reply as a multipart upload: sendPhoto for a photo, sendDocument for the rest. A
    photo Telegram refuses as one (400: too long or wide, PHOTO_INVALID_DIMENSIONS) goes again as a document."""
    if not inbox.access_token:
        return SendResult(
            DeliveryResult(ok=False, permanent=True, error="The inbox has no Telegram bot token.")
        )
    base = str(inbox.provider_config.get("api_base_url") or DEFAULT_API_BASE_URL).rstrip("/")
    chat_id, data = str(_chat_id(source_id)), file.read()
    if file.content_type in PHOTO_TYPES and file.size <= PHOTO_LIMIT:
        sent = _upload(f"{base}/bot{inbox.access_token}/sendPhoto", chat_id, "photo", file, data, timeout)
        if sent.result.ok or sent.result.status_code != 400:
            return sent
    return _upload(f"{base}/bot{inbox.access_token}/sendDocument", chat_id, "document", file, data, timeout)
