"""Serving a conversation's files: to the people of the account (`attachment_file`: what customers sent, and what
people attached), and one file a person attached to a reply to whoever holds its signed link (`shared_file`: the
API channel's event and the website widget hand these to the customer's side; a note's file never has one).

The files live in Django's default storage under names nobody can guess, and are never served as static media:
these views are the only way to them. They answer 404 for another account's file, a forged or expired link, exactly
as for a missing one, and send the type our own check found (`helpdesk.services.attachments.sniff_content_type`),
never the sender's claim, with `nosniff` so a browser cannot decide otherwise.
"""

from __future__ import annotations

from typing import cast

from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from helpdesk.models import Attachment, Membership
from helpdesk.services.attachments import access_attachment
from helpdesk.services.reply_files import shared_file_access

from .base import account_view


@require_GET
@account_view()
def attachment_file(request: HttpRequest, membership: Membership, attachment_id: int) -> HttpResponse:
    attachment = access_attachment(
        account_id=membership.account_id, attachment_id=attachment_id, user=request.user
    )
    if attachment is None:
        raise Http404("No such file.")
    return _file_response(attachment)


@require_GET
def shared_file(request: HttpRequest, token: str) -> HttpResponse:
    """A file a person attached to a reply, opened by the signed link the customer's side was given (the API
    channel's event): no login, the signature is the permission. A forged or expired link is a 404."""
    attachment = shared_file_access(token=token)
    if attachment is None:
        raise Http404("No such file.")
    return _file_response(attachment)


def _file_response(attachment: Attachment) -> HttpResponse:
    try:
        handle = attachment.file.open("rb")
    except FileNotFoundError as exc:
        raise Http404("The file is no longer stored.") from exc
    extension = attachment.file.name.rpartition(".")[2]
    # A PDF (attached by a person) is downloaded under its name: the sandbox below keeps a browser's PDF viewer
    # from showing it in the page.
    download = attachment.content_type == "application/pdf"
    response = FileResponse(
        handle,
        content_type=attachment.content_type,
        # Images and audio are shown in the page; `filename` only names a download ("Save as").
        as_attachment=download,
        filename=(attachment.file_name if download else "")
        or f"{attachment.kind}-{attachment.pk}.{extension}",
    )
    response["X-Content-Type-Options"] = "nosniff"
    # Should a file ever be opened as a document, it runs nothing and reaches nothing.
    response["Content-Security-Policy"] = "default-src 'none'; media-src 'self'; img-src 'self'; sandbox"
    response["Cache-Control"] = "private, max-age=3600"
    # A streaming response (the file is not read into memory); Django serves both kinds alike.
    return cast(HttpResponse, response)
