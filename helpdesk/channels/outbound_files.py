"""Files people attach to a reply: how large each channel lets a bot send them, and reading them back to send.

Each channel states its limits (`Channel.file_limits`, `Channel.files_total_limit`), the providers' documented
limits for what a bot uploads, checked when the reply is written so an agent learns at once, not when the delivery
fails:
- Telegram Bot API: `sendDocument` takes files up to 50 MB (`sendPhoto` 10 MB: a larger image goes as a
  document, so 50 MB is the channel's limit for every kind);
- WhatsApp Cloud API media: images 5 MB, audio 16 MB, documents 100 MB;
- Slack (`files.getUploadURLExternal` then `files.completeUploadExternal`): 1 GB, above what we keep;
- the channels we serve ourselves (API channel links, the website widget, e-mail): `OWN_LIMIT`; a mail carries
  its files itself, so on e-mail all of a reply's files together take at most 25 MB, what common mail services
  accept.
Whatever the channel allows, we keep no file over `STORE_LIMIT` (it is read into memory to be sent).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from django.conf import settings
from django.core import signing
from django.urls import reverse

from helpdesk.models import Attachment, Message

MB = 1000 * 1000
"""Decimal megabytes: a provider's "50 MB" read the smaller way is never over its limit."""
STORE_LIMIT = 100 * MB
OWN_LIMIT = 25 * MB
"""API channel, widget and e-mail: files we serve or mail ourselves (25 MB is what common mail services take)."""
MAX_FILES = 10
"""Files one reply or note may carry."""
UPLOAD_REF = "upload"
"""`Attachment.provider_ref` of a file a person attached (a customer's file holds the provider's id)."""
SHARED_LINK_MAX_AGE = 30 * 24 * 3600
"""How long a link we hand a customer's side (the API channel's event) opens the file, in seconds."""
_SHARED_LINK_SALT = "helpdesk.reply-file"

ANY_KIND = "*"
"""The key of a channel's `file_limits` for every kind it does not name."""


def send_limit(limits: Mapping[str, int], kind: str) -> int:
    """The largest file of `kind` (image, audio, file) a channel's `file_limits` allow, within `STORE_LIMIT`."""
    return min(limits.get(kind, limits.get(ANY_KIND, OWN_LIMIT)), STORE_LIMIT)


@dataclass(frozen=True)
class OutboundFile:
    """One stored file of an outgoing message, as a channel sends it."""

    attachment_id: int
    file_name: str
    content_type: str
    kind: str
    """image, audio or file."""
    size: int

    def read(self) -> bytes:
        """The file's bytes, from storage; MissingFile when they are gone (deleted from the storage meanwhile)."""
        attachment = Attachment.objects.filter(pk=self.attachment_id).first()
        try:
            if attachment is None:
                raise FileNotFoundError(self.attachment_id)
            with attachment.file.open("rb") as handle:
                return bytes(handle.read())
        except (OSError, ValueError) as exc:  # ValueError: a row without a file name
            raise MissingFile(f"The file {self.file_name} is no longer stored.") from exc


class MissingFile(Exception):
    """A file of the reply is recorded but its bytes are gone: sending it again will not help. `str` is for
    people."""


def outbound_files(message: Message) -> list[OutboundFile]:
    """The stored files of an outgoing message, in the order they were attached (none for most messages)."""
    if not message.attachments:
        return []  # the message lists its files: no query for the many messages without any
    return [
        OutboundFile(
            attachment_id=row.pk,
            file_name=row.file_name or f"file-{row.pk}",
            content_type=row.content_type,
            kind=row.kind,
            size=row.size,
        )
        for row in message.files.filter(status=Attachment.Status.STORED).order_by("id")
    ]


def shared_file_url(attachment_id: int) -> str:
    """A link that opens one attached file of a reply without a login, for `SHARED_LINK_MAX_AGE` seconds:
    signed with the site's secret, so it cannot be made up for another file (helpdesk.views.attachments)."""
    token = signing.TimestampSigner(salt=_SHARED_LINK_SALT).sign(str(attachment_id))
    return settings.PUBLIC_BASE_URL.rstrip("/") + reverse("dashboard:shared-file", args=[token])


def shared_file_id(token: str) -> int | None:
    """The attachment a shared link names, or None when it is forged, altered or older than its max age."""
    try:
        value = signing.TimestampSigner(salt=_SHARED_LINK_SALT).unsign(token, max_age=SHARED_LINK_MAX_AGE)
    except signing.BadSignature:  # SignatureExpired is one
        return None
    return int(value) if value.isdigit() else None
