"""A visitor sends a file from the widget (`POST files/`): checked like every customer file before anything is
stored (type, size, first bytes), stored with its message, named in the visitor's thread; every refusal is a 4xx
with the reason and stores nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from helpdesk.models import Attachment, Inbox, Membership, Message
from tests.factories import MembershipFactory, UserFactory
from tests.helpdesk.channels_widget.support import PAGE, call, new_visitor, url, widget_inbox
from tests.support.fake_files import PNG, WINDOWS_EXE

pytestmark = pytest.mark.django_db

PDF = b"%PDF-1.7\n" + b"1 0 obj <<>> endobj\n" * 40


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path) -> Path:
    settings.MEDIA_ROOT = str(tmp_path)
    return tmp_path


@pytest.fixture
def inbox() -> Inbox:
    return widget_inbox()


def upload(
    client: Client,
    inbox: Inbox,
    token: str,
    *,
    name: str = "photo.png",
    data: bytes = PNG,
    content_type: str = "image/png",
    message_id: str = "f1",
    text: str = "",
    origin: str = PAGE,
):
    form = {"id": message_id, "file": SimpleUploadedFile(name, data, content_type)}
    if text:
        form["text"] = text
    headers = {"Origin": origin, "X-Visitor-Token": token} if token else {"Origin": origin}
    return client.post(url(inbox, "files"), data=form, headers=headers)


def test_a_visitors_photo_is_stored_with_its_message_and_named_in_their_thread(client, inbox, media_root):
    token = new_visitor(client, inbox)

    response = upload(client, inbox, token, text="The box arrived like this")

    assert response.status_code == 201, response.content
    assert response["Access-Control-Allow-Origin"] == PAGE
    message = Message.objects.get()
    assert (message.message_type, message.content) == (Message.Type.INCOMING, "The box arrived like this")
    (stored,) = message.files.all()
    assert (stored.status, stored.kind, stored.content_type, stored.file_name) == (
        Attachment.Status.STORED,
        Attachment.Kind.IMAGE,
        "image/png",
        "photo.png",
    )
    assert (media_root / stored.file.name).read_bytes() == PNG
    assert message.attachments == [{"type": "image", "file_name": "photo.png", "content_type": "image/png"}]
    thread = call(client, "GET", inbox, "messages", token=token).json()["messages"]
    assert [(m["text"], m["files"]) for m in thread] == [
        ("The box arrived like this", [{"name": "photo.png", "url": ""}])
    ]


def test_a_file_without_a_caption_is_a_message_and_the_same_id_twice_is_stored_once(client, inbox):
    token = new_visitor(client, inbox)
    assert upload(client, inbox, token).status_code == 201
    again = upload(client, inbox, token)
    assert (again.status_code, again.json()["status"]) == (200, "duplicate")
    assert Message.objects.get().content == ""
    assert Attachment.objects.count() == 1


@pytest.mark.parametrize(
    ("name", "data", "content_type", "reason"),
    [
        ("invoice.pdf", PDF, "application/pdf", "Files of type application/pdf are not accepted."),
        ("cat.png", WINDOWS_EXE, "image/png", "The file's content is not an accepted image or audio format."),
        ("cat.png", WINDOWS_EXE, "application/octet-stream", "The file's content is not an accepted"),
    ],
)
def test_a_file_we_do_not_keep_is_refused_with_the_reason_and_nothing_stored(
    client, inbox, name, data, content_type, reason
):
    token = new_visitor(client, inbox)

    response = upload(client, inbox, token, name=name, data=data, content_type=content_type)

    assert (response.status_code, response.json()["error"]) == (400, "file_refused")
    assert response.json()["detail"].startswith(reason)
    assert not Message.objects.exists() and not Attachment.objects.exists()


def test_a_file_over_the_size_limit_is_refused(client, inbox, settings):
    settings.HELPDESK = {**getattr(settings, "HELPDESK", {}), "ATTACHMENT_MAX_BYTES": 2000}
    token = new_visitor(client, inbox)

    just_over = upload(client, inbox, token, data=PNG + b"\0" * (2001 - len(PNG)))
    far_over = upload(client, inbox, token, data=PNG + b"\0" * 200_000, message_id="f2")

    assert (just_over.status_code, just_over.json()["error"]) == (400, "file_refused")
    assert "larger than 2000 bytes" in just_over.json()["detail"]
    assert (far_over.status_code, far_over.json()["error"]) == (400, "too_large")  # not even read
    assert not Message.objects.exists()


def test_strangers_and_broken_forms_are_refused_before_anything_is_stored(client, inbox):
    token = new_visitor(client, inbox)
    elsewhere = upload(client, inbox, token, origin="https://evil.example")
    no_token = upload(client, inbox, "")
    as_json = call(client, "POST", inbox, "files", token=token, body={"id": "x", "text": "hi"})
    no_file = client.post(
        url(inbox, "files"), data={"id": "x"}, headers={"Origin": PAGE, "X-Visitor-Token": token}
    )
    bad_id = upload(client, inbox, token, message_id="../../etc")
    garbage = client.generic(
        "POST",
        url(inbox, "files"),
        data=b'--zz\r\nContent-Disposition: form-data; name="file"\r\n\r\n\x00\xff',
        content_type="multipart/form-data; boundary=zz",
        headers={"Origin": PAGE, "X-Visitor-Token": token},
    )

    assert (elsewhere.status_code, elsewhere.json()["error"]) == (403, "origin_not_allowed")
    assert "Access-Control-Allow-Origin" not in elsewhere
    assert (no_token.status_code, no_token.json()["error"]) == (401, "visitor_token_missing")
    assert (as_json.status_code, as_json.json()["error"]) == (400, "invalid_form")
    assert (no_file.status_code, no_file.json()["error"]) == (400, "file_missing")
    assert (bad_id.status_code, bad_id.json()["error"]) == (400, "invalid_payload")
    assert garbage.status_code == 400
    assert not Message.objects.exists() and not Attachment.objects.exists()


def test_the_preflight_allows_the_form(client, inbox):
    response = call(client, "OPTIONS", inbox, "files")
    assert response.status_code == 204
    assert "X-Visitor-Token" in response["Access-Control-Allow-Headers"]


def test_the_team_sees_the_visitors_photo_on_the_conversation_page(client, inbox):
    token = new_visitor(client, inbox)
    assert upload(client, inbox, token, text="Broken on arrival").status_code == 201
    message = Message.objects.get()
    stored = message.files.get()
    agent = UserFactory()
    MembershipFactory(account=inbox.account, user=agent, role=Membership.Role.AGENT)
    client.force_login(agent)

    page = client.get(f"/app/accounts/{inbox.account_id}/conversations/{message.conversation_id}/")

    assert page.status_code == 200
    link = f"/app/accounts/{inbox.account_id}/attachments/{stored.id}/"
    assert link in page.content.decode() and "Broken on arrival" in page.content.decode()
    served = client.get(link)
    assert (served.status_code, served["Content-Type"]) == (200, "image/png")
    assert b"".join(served.streaming_content) == PNG
