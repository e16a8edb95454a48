"""A customer's mail with photos, 19 MB, through the real web server (gunicorn + uvicorn, ASGI) on Mailgun's
signed inbound route: taken (the e-mail channel reads up to 26 MB, what Mailgun delivers) and stored with its
photo, the file over the customer-file limit listed with the reason; a request over the channel's limit is a
clear 400, nothing stored."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from helpdesk.models import Attachment, Message
from tests.helpdesk.channels_email.support import email_inbox, multipart, signed_fields
from tests.helpdesk.channels_email.test_mail_attachments import mail_with
from tests.support.fake_files import PNG
from tests.support.servers import WebServer, start_test_web_server

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def server(redis_url, tmp_path: Path) -> Iterator[WebServer]:
    web = start_test_web_server(redis_url=redis_url, tmp_path=tmp_path)
    try:
        yield web
    finally:
        web.stop()


def deliver(server: WebServer, token: str, raw: bytes) -> httpx.Response:
    body, content_type = multipart(signed_fields(raw))
    return httpx.post(
        f"{server.url}/webhooks/email/{token}/",
        content=body,
        headers={"Content-Type": content_type},
        timeout=60,
    )


def test_a_mail_of_19_mb_is_stored_with_its_photo_and_one_over_26_mb_is_refused(server):
    inbox = email_inbox()
    photo = PNG + bytes(range(256)) * (3 * 4096)
    raw = mail_with([("damage.png", photo), ("huge.png", PNG + b"\0" * (11 * 1024 * 1024))])
    assert len(raw) > 18 * 1024 * 1024

    response = deliver(server, inbox.webhook_token, raw)

    assert response.status_code == 200, response.text
    message = Message.objects.get(pk=response.json()["message_ids"][0])
    assert message.content == "The photos are attached."
    rows = {row.file_name: row.status for row in Attachment.objects.filter(message=message)}
    assert rows == {"damage.png": "stored", "huge.png": "refused"}

    too_big = mail_with([("a.png", PNG + b"\0" * (20 * 1024 * 1024))]).replace(b"big-1@", b"big-2@")
    refused = deliver(server, inbox.webhook_token, too_big)
    assert (refused.status_code, refused.json()["error"]) == (400, "too_large")
    assert Message.objects.count() == 1
