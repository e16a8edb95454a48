"""Files on a reply or note over the REST API: multipart `files` next to the JSON body, checked before anything
is stored, and documented in the OpenAPI schema."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from helpdesk.models import Attachment, Delivery, Inbox, Membership, Message
from tests.factories import (
    ContactInboxFactory,
    ConversationFactory,
    InboxFactory,
    MembershipFactory,
    MessageFactory,
)
from tests.support.fake_files import JPEG, PNG, WINDOWS_EXE
from tests.support.openapi import api_schema
from tests.support.outbox import delivery_of

pytestmark = pytest.mark.django_db

PDF = b"%PDF-1.4\n" + b"0" * 500


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path) -> Path:
    settings.MEDIA_ROOT = str(tmp_path)
    return tmp_path


@pytest.fixture
def member():
    return MembershipFactory(role=Membership.Role.AGENT)


@pytest.fixture
def client(member):
    api = APIClient()
    api.force_authenticate(member.user)
    return api


def messages_url(member, channel_type=Inbox.ChannelType.API) -> tuple[str, int]:
    inbox = InboxFactory(account=member.account, channel_type=channel_type)
    conversation = ConversationFactory(contact_inbox=ContactInboxFactory(inbox=inbox))
    return f"/api/v1/accounts/{member.account_id}/conversations/{conversation.id}/messages/", conversation.id


def test_a_multipart_reply_carries_several_files(client, member, media_root):
    url, _ = messages_url(member)
    files = [
        SimpleUploadedFile("a.png", PNG, "image/png"),
        SimpleUploadedFile("b.pdf", PDF, "application/pdf"),
    ]
    response = client.post(url, {"content": "Both attached", "files": files}, format="multipart")
    assert response.status_code == 201, response.content
    message = Message.objects.get(pk=response.data["id"])
    assert message.content == "Both attached"
    assert [(f.file_name, f.content_type) for f in message.files.order_by("id")] == [
        ("a.png", "image/png"),
        ("b.pdf", "application/pdf"),
    ]
    assert delivery_of(message).status == Delivery.Status.QUEUED
    assert [(f["file_name"], f["kind"], f["status"], f["size"]) for f in response.json()["files"]] == [
        ("a.png", "image", "stored", len(PNG)),
        ("b.pdf", "file", "stored", len(PDF)),
    ]
    thread = client.get(url).json()["results"]
    assert {m["id"]: len(m["files"]) for m in thread}[message.pk] == 2  # the thread lists them too


def test_a_multipart_note_of_a_file_alone(client, member):
    url, _ = messages_url(member)
    response = client.post(
        url, {"private": "true", "files": [SimpleUploadedFile("scan.jpg", JPEG)]}, format="multipart"
    )
    assert response.status_code == 201, response.content
    note = Message.objects.get(pk=response.data["id"])
    assert (note.private, note.content, note.files.count()) == (True, "", 1)


def test_a_refused_file_is_a_400_naming_it_and_nothing_is_stored(client, member, media_root):
    url, conversation_id = messages_url(member, Inbox.ChannelType.WHATSAPP)
    # The customer wrote first, as on WhatsApp they must: the reply window is open.
    MessageFactory(conversation_id=conversation_id, content="can you send the manual?")
    files = [SimpleUploadedFile("ok.png", PNG), SimpleUploadedFile("setup.pdf", WINDOWS_EXE)]
    response = client.post(url, {"content": "x", "files": files}, format="multipart")
    assert response.status_code == 400
    [error] = response.json()["files"]
    assert error.startswith("“setup.pdf” cannot be attached: only images, audio and PDF")
    assert Message.objects.filter(conversation_id=conversation_id).count() == 1
    assert not Attachment.objects.exists()
    assert [p for p in media_root.rglob("*") if p.is_file()] == []


def test_a_multipart_body_without_text_or_files_is_a_400(client, member):
    url, _ = messages_url(member)
    response = client.post(url, {"content": "  "}, format="multipart")
    assert response.status_code == 400
    assert response.json()["content"] == ["Write a text or attach a file."]


def test_a_json_reply_works_as_before_and_still_needs_its_text(client, member):
    url, _ = messages_url(member)
    assert client.post(url, {"content": "Plain"}, format="json").status_code == 201
    assert client.post(url, {"content": ""}, format="json").status_code == 400


def test_the_schema_documents_the_multipart_files_next_to_json():
    schema = api_schema()
    body = schema["paths"]["/api/v1/accounts/{account_id}/conversations/{conversation_id}/messages/"]["post"][
        "requestBody"
    ]["content"]
    assert set(body) == {"application/json", "multipart/form-data"}
    ref = body["multipart/form-data"]["schema"]["$ref"].rpartition("/")[2]
    files = schema["components"]["schemas"][ref]["properties"]["files"]
    assert files["type"] == "array"
    assert files["items"] == {"type": "string", "format": "binary"}
    assert files["maxItems"] == 10
