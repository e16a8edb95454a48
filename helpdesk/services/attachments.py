"""Files customers send through a channel (photos, voice notes ...): recorded at ingest, fetched afterwards.

A channel's webhook reports only a reference (a file id or media id; see each channel's `parse`).
`attachments_create` records one `Attachment` row per reported file in the ingest transaction and queues
`helpdesk.tasks.attachment_fetch` after commit; `attachment_fetch` asks the inbox's channel where the file is
(`Channel.fetch_media`), downloads it, checks it and keeps it in Django's default storage.

What a download must pass, in order (anything else is `refused`, with the reason, and nothing is stored):
- the declared type (from the webhook or the provider's metadata), when there is one, is an image or audio type
  we accept (or says nothing: `application/octet-stream`);
- the declared size is at most `HELPDESK["ATTACHMENT_MAX_BYTES"]`, and so are the bytes actually received
  (counted while streaming by the outbound client, which stops reading past the limit);
- the first bytes are one of the accepted formats (`sniff_content_type`): the declared type alone is the
  sender's claim, and the dashboard serves the file with the type we found, never the one we were told.
These checks live in helpdesk.services.attachment_checks (re-exported here: `sniff_content_type`).
A network failure or a provider error worth retrying is `failed`; the task retries it with backoff.

Every request goes through the outbound policy (helpdesk.outbound): `api_base_url` is tenant configuration and
the download URLs come from the provider's answers. Errors are our own wording, never the URL (a file URL can
hold a bot token) nor text the remote server sent.
"""

from __future__ import annotations

import logging
import re
import secrets
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
from celery import current_app
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import transaction

from helpdesk.channels.media import Download, Failed, Refused, reported_size
from helpdesk.channels.registry import UnknownChannel, channel_for, channel_for_type
from helpdesk.conf import helpdesk_setting
from helpdesk.models import Attachment, Message
from helpdesk.outbound import OutboundRefused, ResponseTooLarge, outbound_client
from helpdesk.selectors.visibility import visible_conversations_q

from .attachment_checks import (
    ACCEPTED_TYPES,
    SNIFF_BYTES,
    check_declared,
    kind_of,
    max_bytes,
    normalised_type,
    sniff_content_type,
)

logger = logging.getLogger(__name__)

# The channel's name for a file's type -> our kind ("file" says nothing: its declared type decides).
KIND_BY_REPORTED_TYPE: dict[str, str] = {
    "photo": Attachment.Kind.IMAGE,
    "image": Attachment.Kind.IMAGE,
    "sticker": Attachment.Kind.IMAGE,
    "voice": Attachment.Kind.AUDIO,
    "audio": Attachment.Kind.AUDIO,
    "video": Attachment.Kind.VIDEO,
    "document": Attachment.Kind.FILE,
    "file": Attachment.Kind.FILE,
}
FETCH_TASK = "helpdesk.tasks.attachment_fetch"
"""The Celery task that fetches one attachment (helpdesk/tasks.py), by its registered name."""
REDIRECTS_FOLLOWED = 3
# Provider ids end up in a URL path or query; anything else could change the request.
_PROVIDER_ID = re.compile(r"[A-Za-z0-9_\-]{1,256}")


# ---- recording at ingest -------------------------------------------------------------------------------------


def _kind(reported_type: str, content_type: str) -> str:
    kind = KIND_BY_REPORTED_TYPE.get(reported_type, Attachment.Kind.FILE)
    if kind == Attachment.Kind.FILE:
        major = content_type.partition("/")[0]
        kind = {
            "image": Attachment.Kind.IMAGE,
            "audio": Attachment.Kind.AUDIO,
            "video": Attachment.Kind.VIDEO,
        }.get(major, Attachment.Kind.FILE)
    return kind


def _fetches_media(channel_type: str) -> bool:
    try:
        return channel_for_type(channel_type).fetches_media
    except UnknownChannel:
        return False


def attachments_create(*, message: Message, reported: Sequence[Mapping[str, Any]]) -> list[Attachment]:
    """One pending Attachment per file the channel reported for `message`, in the caller's transaction (the
    ingest's), and the fetch task queued after commit. Channels without a provider API to fetch from (the API
    channel sends links) record nothing."""
    if not _fetches_media(message.inbox.channel_type):
        return []
    created: list[Attachment] = []
    for item in reported:
        if not isinstance(item, Mapping):
            continue
        reference = item.get("media_id") or item.get("file_id")
        if not isinstance(reference, str) or not reference:
            continue
        content_type = str(item.get("content_type") or "")[:100]
        created.append(
            Attachment.objects.create(
                account_id=message.account_id,
                message=message,
                kind=_kind(str(item.get("type") or ""), content_type.lower()),
                provider_ref=reference[:1000],
                content_type=content_type,
                size=min(reported_size(item.get("file_size")), 2**31 - 1),
                file_name=str(item.get("file_name") or "")[:255],
            )
        )
    ids = [attachment.pk for attachment in created]
    if ids:
        transaction.on_commit(lambda: attachments_enqueue(attachment_ids=ids))
    return created


def attachments_enqueue(*, attachment_ids: Iterable[int]) -> None:
    """Queue the fetch task for each attachment. A broker outage is logged, not raised: the webhook has been
    answered, and the reply run fetches what is still pending before it answers (`attachments_ready`).

    The task is sent by name: `helpdesk.tasks` imports this module, so importing the task here would close an
    import loop. With `task_always_eager` (no broker) the fetch runs here, as the task would."""
    app = current_app
    for attachment_id in attachment_ids:
        if app.conf.task_always_eager:
            attachment_fetch_by_id(attachment_id=attachment_id)
            continue
        try:
            app.send_task(FETCH_TASK, args=[attachment_id])
        except Exception:  # kombu raises several types for a down broker
            logger.exception("could not enqueue the fetch of attachment %s", attachment_id)


# ---- fetching: the channel says where the file is (Channel.fetch_media), the download is checked here ---------


def _timeout() -> float:
    return float(helpdesk_setting("ATTACHMENT_FETCH_TIMEOUT_SECONDS"))


def _download(client: httpx.Client, source: Download, kind: str) -> tuple[Any, int, str]:
    """Stream the file into a temporary file: (file, size, sniffed type). Redirects are followed by hand, each
    hop through the same policy-checked client; the credentials stay with the host they were meant for."""
    url, headers = source.url, dict(source.headers)
    for _hop in range(REDIRECTS_FOLLOWED + 1):
        try:
            with client.stream("GET", url, headers=headers) as response:
                if response.is_redirect and "Location" in response.headers:
                    target = response.url.join(response.headers["Location"])
                    if target.host != response.url.host:
                        headers.pop("Authorization", None)
                    url = str(target)
                    continue
                if response.status_code == 429 or response.status_code >= 500:
                    raise Failed(f"the file download answered HTTP {response.status_code}")
                if response.status_code != 200:
                    raise Failed(f"the file download answered HTTP {response.status_code}", transient=False)
                spool = tempfile.SpooledTemporaryFile(max_size=1024 * 1024)  # noqa: SIM115 (returned)
                size, head = 0, b""
                try:
                    for chunk in response.iter_raw():
                        if len(head) < SNIFF_BYTES:
                            head += chunk[: SNIFF_BYTES - len(head)]
                        size += len(chunk)
                        spool.write(chunk)
                except BaseException:
                    spool.close()
                    raise
        except ResponseTooLarge as exc:
            raise Refused(f"the file is larger than {max_bytes()} bytes") from exc
        except httpx.TimeoutException as exc:
            raise Failed("timed out downloading the file") from exc
        except httpx.HTTPError as exc:
            raise Failed(f"network error downloading the file ({type(exc).__name__})") from exc
        content_type = sniff_content_type(head, kind=kind)
        if content_type is None:
            spool.close()
            raise Refused("the file's content is not an accepted image or audio format")
        spool.seek(0)
        return spool, size, content_type
    raise Failed("the file download redirected too many times", transient=False)


def _store(attachment: Attachment, spool: Any, size: int, content_type: str) -> bool:
    """Save the bytes under a name nobody can guess, then mark the row stored unless another fetch got there
    first (the task and a reply run can fetch the same file at once); the loser's copy is deleted."""
    name = f"attachments/{attachment.account_id}/{secrets.token_urlsafe(24)}{ACCEPTED_TYPES[content_type]}"
    saved = default_storage.save(name, File(spool, name=name))
    updated = Attachment.objects.filter(
        pk=attachment.pk, status__in=[Attachment.Status.PENDING, Attachment.Status.FAILED]
    ).update(
        status=Attachment.Status.STORED,
        file=saved,
        content_type=content_type,
        kind=kind_of(content_type),
        size=size,
        error="",
    )
    if not updated:
        default_storage.delete(saved)
        return False
    attachment.status, attachment.content_type, attachment.size = Attachment.Status.STORED, content_type, size
    attachment.kind, attachment.error = kind_of(content_type), ""
    attachment.file.name = saved
    return True


def _mark(attachment: Attachment, status: str, error: str) -> None:
    # Never downgrades a file another fetch stored meanwhile.
    Attachment.objects.filter(
        pk=attachment.pk, status__in=[Attachment.Status.PENDING, Attachment.Status.FAILED]
    ).update(status=status, error=error[:500])
    attachment.refresh_from_db(fields=["status", "error"])


@dataclass(frozen=True)
class FetchResult:
    status: str
    """The attachment's status afterwards: stored, refused or failed."""
    transient: bool = False
    """A failure worth retrying later (network, provider 429/5xx)."""


def attachment_fetch(attachment: Attachment, *, timeout: float | None = None) -> FetchResult:
    """Download, check and store one attachment (see the module docstring). Does nothing to a row that is
    already stored or refused. `timeout` bounds each request (default `ATTACHMENT_FETCH_TIMEOUT_SECONDS`)."""
    if attachment.status in (Attachment.Status.STORED, Attachment.Status.REFUSED):
        return FetchResult(attachment.status)
    inbox = attachment.message.inbox
    if not _fetches_media(inbox.channel_type):
        _mark(attachment, Attachment.Status.REFUSED, "this channel has no provider API to fetch files from")
        return FetchResult(attachment.status)
    if not _PROVIDER_ID.fullmatch(attachment.provider_ref):
        _mark(attachment, Attachment.Status.REFUSED, "the provider's file id is not valid")
        return FetchResult(attachment.status)
    limit = max_bytes()
    try:
        check_declared(attachment.content_type, attachment.size)
        with outbound_client(timeout=timeout or _timeout(), max_response_bytes=limit) as client:
            source = channel_for(inbox).fetch_media(client, inbox, attachment.provider_ref)
            check_declared(source.declared_type, source.declared_size)
            spool, size, content_type = _download(client, source, attachment.kind)
        with spool:
            _store(attachment, spool, size, content_type)
    except Refused as exc:
        _mark(attachment, Attachment.Status.REFUSED, str(exc))
    except OutboundRefused as exc:
        # The policy's reasons never contain a URL's path or query.
        _mark(attachment, Attachment.Status.REFUSED, f"refused by the outbound policy: {exc}")
    except Failed as exc:
        _mark(attachment, Attachment.Status.FAILED, str(exc))
        return FetchResult(attachment.status, transient=exc.transient)
    if attachment.status == Attachment.Status.REFUSED:
        logger.info("attachment %s refused: %s", attachment.pk, attachment.error)
    return FetchResult(attachment.status)


def attachment_store_received(
    *, message: Message, file_name: str, declared_type: str, data: bytes
) -> Attachment:
    """A file that arrived inside the message (an e-mail's part) instead of by reference: checked as a download
    is (declared type, size, first bytes) and stored, or recorded refused with the reason, so the message always
    shows it was there."""
    declared = normalised_type(declared_type)
    attachment = Attachment.objects.create(
        account_id=message.account_id,
        message=message,
        kind=_kind("", declared),
        provider_ref="received",
        content_type=declared_type[:100],
        size=min(len(data), 2**31 - 1),
        file_name=file_name[:255],
    )
    try:
        check_declared(declared, len(data))
        content_type = sniff_content_type(data[:SNIFF_BYTES], kind=attachment.kind)
        if content_type is None:
            raise Refused("the file's content is not an accepted image or audio format")
        with tempfile.SpooledTemporaryFile(max_size=1024 * 1024) as spool:
            spool.write(data)
            spool.seek(0)
            _store(attachment, spool, len(data), content_type)
    except Refused as exc:
        _mark(attachment, Attachment.Status.REFUSED, str(exc))
    return attachment


def attachment_fetch_by_id(*, attachment_id: int) -> FetchResult | None:
    """The task's entry point: None when the row is gone (its message was deleted)."""
    attachment = Attachment.objects.select_related("message__inbox").filter(pk=attachment_id).first()
    if attachment is None:
        return None
    return attachment_fetch(attachment)


def attachments_ready(*, message_ids: Iterable[int], timeout: float) -> None:
    """Fetch the still-pending attachments of these messages now, within `timeout` seconds in all, so a reply
    run sees the files its customer just sent (the queued task may not have run yet). What does not fit in the
    time stays pending for the task."""
    deadline = time.monotonic() + timeout
    pending = Attachment.objects.select_related("message__inbox").filter(
        message_id__in=list(message_ids), status=Attachment.Status.PENDING
    )
    for attachment in pending:
        left = deadline - time.monotonic()
        if left <= 0.5:
            break
        attachment_fetch(attachment, timeout=min(left, _timeout()))


def access_attachment(*, account_id: int, attachment_id: int, user: Any | None = None) -> Attachment | None:
    """A stored attachment of this account in a conversation `user` sees (helpdesk.selectors.visibility), or
    None (whether it exists elsewhere is not revealed)."""
    return (
        Attachment.objects.filter(pk=attachment_id, account_id=account_id, status=Attachment.Status.STORED)
        .filter(visible_conversations_q(account_id=account_id, user=user, prefix="message__conversation__"))
        .exclude(file="")
        .first()
    )
