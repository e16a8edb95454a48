"""WhatsApp Cloud API: sending the files a person attached to a reply (helpdesk.channels.outbound_files).

Each file takes two requests: the bytes are uploaded to `POST /{version}/{phone_number_id}/media`
(multipart/form-data: `messaging_product=whatsapp`, `type`, `file`), which answers a media id; then a message of
type `image` (JPEG, PNG), `audio` (AAC, AMR, MP3, M4A, OGG) or `document` (anything else, with its file name)
names that id. Only the message is the delivery's part: should it fail, a retry uploads the file again (an
unused upload expires at Meta), and the customer still gets the file once.
Sizes were checked when the reply was written (images 5 MB, audio 16 MB, documents 100 MB).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import DeliveryResult
from .outbound_files import OutboundFile
from .provider_http import SendResult, dict_or_empty, post_form, retry_after_seconds
from .whatsapp import known_error, number_url, post_message

if TYPE_CHECKING:
    from helpdesk.models import Inbox

IMAGE_TYPES = frozenset({"image/jpeg", "image/png"})
AUDIO_TYPES = frozenset({"audio/aac", "audio/amr", "audio/mpeg", "audio/mp4", "audio/ogg"})


def _media_message(file: OutboundFile, media_id: str) -> dict[str, Any]:
    if file.content_type in IMAGE_TYPES:
        return {"type": "image", "image": {"id": media_id}}
    if file.content_type in AUDIO_TYPES:
        return {"type": "audio", "audio": {"id": media_id}}
    return {"type": "document", "document": {"id": media_id, "filename": file.file_name}}


def _upload(inbox: Inbox, url: str, file: OutboundFile, timeout: float) -> str | DeliveryResult:
    """The media id Meta gives the uploaded file, or why there is none."""
    answer = post_form(
        url,
        fields={"messaging_product": "whatsapp", "type": file.content_type},
        files={"file": (file.file_name, file.read(), file.content_type)},
        headers={"Authorization": f"Bearer {inbox.access_token}"},
        timeout=timeout,
    )
    if isinstance(answer, DeliveryResult):
        return answer
    media_id = dict_or_empty(answer.body).get("id")
    if 200 <= answer.status_code < 300 and isinstance(media_id, str) and media_id:
        return media_id
    status, code = answer.status_code, dict_or_empty(dict_or_empty(answer.body).get("error")).get("code")
    error = f"WhatsApp media upload HTTP {status} {known_error(code)}"
    if status == 429 or status >= 500 or 200 <= status < 300:
        retry_after = retry_after_seconds(answer.headers.get("Retry-After"))
        return DeliveryResult(ok=False, error=error, retry_after=retry_after, status_code=status)
    return DeliveryResult(ok=False, permanent=True, error=error, status_code=status)


def send_file(*, inbox: Inbox, source_id: str, file: OutboundFile, timeout: float) -> SendResult:
    """Upload one file, then send the message that shows it to the customer."""
    number = number_url(inbox)
    if isinstance(number, SendResult):
        return number
    media_id = _upload(inbox, f"{number}/media", file, timeout)
    if isinstance(media_id, DeliveryResult):
        return SendResult(media_id)
    return post_message(inbox, number, source_id, _media_message(file, media_id), timeout)
