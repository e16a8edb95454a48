"""Files a person attaches to a reply or a private note: checked first, then stored with the message.

Every file is checked before anything is stored or sent, and one refused file refuses the whole message (the
caller's transaction rolls back; no file is written before all passed):
- at most `MAX_FILES` files;
- not empty, and no larger than the channel lets a bot send (helpdesk.channels.outbound_files; a note, which
  never leaves the helpdesk, by our own limit);
- its first bytes are an image or audio format we accept (the same sniffing as a customer's file,
  helpdesk.services.attachment_checks) or a PDF. Anything else (programs, scripts, archives, HTML) is refused:
  the type a browser reports is the uploader's claim, the bytes decide.
The error names the file and the reason, in words for the person who attached it.

Stored as `Attachment` rows of the message (status stored, `provider_ref` "upload"), listed in the message's
`attachments` as a customer's files are, so the thread shows them the same way and the channels send them.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.utils.translation import gettext as _

from helpdesk.channels.outbound_files import (
    ANY_KIND,
    MAX_FILES,
    MB,
    OWN_LIMIT,
    UPLOAD_REF,
    send_limit,
    shared_file_id,
)
from helpdesk.channels.registry import UnknownChannel, channel_for_type
from helpdesk.models import Attachment, Inbox, Message

from .attachment_checks import ACCEPTED_TYPES, SNIFF_BYTES, kind_of, sniff_content_type

PDF = "application/pdf"
EXTENSIONS: dict[str, str] = {**ACCEPTED_TYPES, PDF: ".pdf"}


class FileRefused(ValueError):
    """A file cannot go with the message; nothing of the message was stored. `str` is for people, in the
    request's language; `file_name` is empty when the files are refused together (their number, their total)."""

    def __init__(self, file_name: str, reason: str) -> None:
        text = _("“%(name)s” cannot be attached: %(reason)s.") % {"name": file_name, "reason": reason}
        super().__init__(text if file_name else reason)
        self.file_name = file_name
        self.reason = reason


@dataclass(frozen=True)
class CheckedFile:
    upload: UploadedFile
    file_name: str
    content_type: str
    kind: str
    size: int


def _file_name(upload: UploadedFile) -> str:
    # Django keeps only the last path segment; control characters would garble the thread and a mail header.
    name = "".join(ch for ch in (upload.name or "") if ch.isprintable()).strip()
    return name[-255:] or "file"


def _sniffed(upload: UploadedFile) -> str | None:
    upload.seek(0)
    head = upload.read(SNIFF_BYTES)
    upload.seek(0)
    if head.startswith(b"%PDF-"):
        return PDF
    # No kind given: an MP4 or WebM container counts only when it says it is audio (M4A); a video is refused.
    return sniff_content_type(head)


def _kind(content_type: str) -> str:
    return Attachment.Kind.FILE if content_type == PDF else kind_of(content_type)


def _size_text(size: int) -> str:
    # Rounded up, so a file just over a limit never reads as exactly the limit.
    if size >= MB:
        tenths = -(-size * 10 // MB)
        return f"{tenths // 10}.{tenths % 10} MB".replace(".0 MB", " MB")
    return f"{-(-size // 1000)} kB"


def _channel_limits(channel_type: str, *, private: bool) -> tuple[Mapping[str, int], int | None]:
    """(largest file per kind, all files together) for a reply on `channel_type`; a note, which never leaves the
    helpdesk, has our own limit only."""
    if private:
        return {ANY_KIND: OWN_LIMIT}, None
    try:
        channel = channel_for_type(channel_type)
    except UnknownChannel:
        return {ANY_KIND: OWN_LIMIT}, None
    return channel.file_limits, channel.files_total_limit


def reply_files_check(*, inbox: Inbox, files: Sequence[UploadedFile], private: bool) -> list[CheckedFile]:
    """Check every file for a reply (or, `private`, a note) in `inbox`; FileRefused for the first that fails."""
    if not files:
        return []
    if len(files) > MAX_FILES:
        raise FileRefused(
            "",
            _("A message can carry at most %(most)d files; %(count)d were attached.")
            % {"most": MAX_FILES, "count": len(files)},
        )
    limits, most = _channel_limits(inbox.channel_type, private=private)
    checked: list[CheckedFile] = []
    for upload in files:
        name, size = _file_name(upload), int(upload.size or 0)
        if size <= 0:
            raise FileRefused(name, _("the file is empty"))
        content_type = _sniffed(upload)
        if content_type is None:
            raise FileRefused(
                name, _("only images, audio and PDF files can be sent (this file is none of them)")
            )
        kind = _kind(content_type)
        limit = send_limit(limits, kind)
        if size > limit:
            where = _("a private note") if private else inbox.get_channel_type_display()
            raise FileRefused(
                name,
                _("it is %(size)s, and %(where)s takes files up to %(limit)s")
                % {"size": _size_text(size), "where": where, "limit": _size_text(limit)},
            )
        checked.append(CheckedFile(upload, name, content_type, kind, size))
    total = sum(item.size for item in checked)
    if most is not None and total > most:
        where = inbox.get_channel_type_display()
        raise FileRefused(
            "",
            _("Together the files are %(size)s, and %(where)s takes up to %(limit)s per message.")
            % {"size": _size_text(total), "where": where, "limit": _size_text(most)},
        )
    return checked


def reply_files_store(*, message: Message, files: Sequence[CheckedFile]) -> list[Attachment]:
    """Store checked files as the message's attachments, in the caller's transaction. Should a write fail, the
    files already written are deleted again before the error goes on (the transaction drops the rows)."""
    if not files:
        return []
    saved: list[str] = []
    rows: list[Attachment] = []
    try:
        for item in files:
            name = (
                f"attachments/{message.account_id}/{secrets.token_urlsafe(24)}{EXTENSIONS[item.content_type]}"
            )
            item.upload.seek(0)
            saved.append(default_storage.save(name, item.upload))
            rows.append(
                Attachment.objects.create(
                    account_id=message.account_id,
                    message=message,
                    kind=item.kind,
                    status=Attachment.Status.STORED,
                    provider_ref=UPLOAD_REF,
                    content_type=item.content_type,
                    size=min(item.size, 2**31 - 1),
                    file_name=item.file_name,
                    file=saved[-1],
                )
            )
    except BaseException:
        for name in saved:
            default_storage.delete(name)
        raise
    if rows:
        message.attachments = [
            *message.attachments,
            *({"type": r.kind, "file_name": r.file_name, "content_type": r.content_type} for r in rows),
        ]
        message.save(update_fields=["attachments"])
    return rows


def shared_file_access(*, token: str) -> Attachment | None:
    """The file a shared link (helpdesk.channels.outbound_files.shared_file_url) opens: only a stored file a
    person attached to a reply the customer was sent, never a note's nor a customer's."""
    attachment_id = shared_file_id(token)
    if attachment_id is None:
        return None
    return (
        Attachment.objects.filter(
            pk=attachment_id,
            provider_ref=UPLOAD_REF,
            status=Attachment.Status.STORED,
            message__private=False,
        )
        .exclude(file="")
        .first()
    )
