"""A visitor's file sent from the website widget (`POST /widget/<website_token>/files/`, helpdesk.api.widget):
read the multipart form and check the file before anything is stored.

The form holds `id` (the page's id for the message, as for a text), an optional caption `text`, and one `file`.
The file goes through the same checks as every customer file (helpdesk.services.attachment_checks: an accepted
image or audio type, at most HELPDESK_ATTACHMENT_MAX_BYTES, and the first bytes must be what the type claims);
a file that fails is refused here with the reason (`400 file_refused`) so the visitor learns it at once and
nothing is stored, rather than a message whose file the team cannot open.
"""

from __future__ import annotations

from io import BytesIO

from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest
from django.http.multipartparser import MultiPartParser, MultiPartParserError

from helpdesk.channels.base import ReceivedFile, WebhookRejected
from helpdesk.channels.media import Refused
from helpdesk.services.attachment_checks import SNIFF_BYTES, check_declared, max_bytes, sniff_content_type

FORM_OVERHEAD = 64 * 1024
"""Room for the form's boundaries, headers, id and caption around the file itself."""


def body_limit() -> int:
    return max_bytes() + FORM_OVERHEAD


def received_file(request: HttpRequest, body: bytes) -> tuple[dict[str, str], ReceivedFile]:
    """The form's text fields and its checked file; WebhookRejected(400) for a broken form or a refused file."""
    if request.content_type != "multipart/form-data":
        raise WebhookRejected(400, "invalid_form", "Send the file as multipart/form-data.")
    meta = {**request.META, "CONTENT_LENGTH": str(len(body))}
    try:
        fields, files = MultiPartParser(meta, BytesIO(body), request.upload_handlers, "utf-8").parse()
        upload = files.get("file")
        data = upload.read() if upload is not None else b""
    except (MultiPartParserError, SuspiciousOperation, UnicodeDecodeError, ValueError) as exc:
        raise WebhookRejected(400, "invalid_form", "The form could not be read.") from exc
    if upload is None or not data:
        raise WebhookRejected(400, "file_missing", "The form has no file (field `file`).")
    declared = upload.content_type or ""
    try:
        check_declared(declared, len(data))
        kind = "audio" if declared.startswith("audio/") else ""
        if sniff_content_type(data[:SNIFF_BYTES], kind=kind) is None:
            raise Refused("the file's content is not an accepted image or audio format")
    except Refused as exc:
        reason = str(exc)
        raise WebhookRejected(400, "file_refused", f"{reason[:1].upper()}{reason[1:]}.") from None
    text_fields = {key: str(fields.get(key, "")) for key in ("id", "text") if key in fields}
    return text_fields, ReceivedFile(file_name=upload.name or "", content_type=declared, data=data)
