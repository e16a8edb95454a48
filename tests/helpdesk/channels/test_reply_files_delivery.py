"""Files a person attached to a reply reach the customer, each channel its own way, through the delivery task:
against the scripted fake providers on 127.0.0.1 (Telegram multipart sendPhoto/sendDocument, WhatsApp media
upload then a message naming it, Slack's three-step upload) and a real callback receiver (API channel links).
Each file is one more part of the delivery: a retry resumes after the parts already accepted."""

from __future__ import annotations

from email.parser import BytesParser
from email.policy import HTTP
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from celery.exceptions import Retry
from django.core.files.uploadedfile import SimpleUploadedFile

from helpdesk.channels.api_channel import outbound_event
from helpdesk.channels.email import smtp
from helpdesk.channels.outbound_files import shared_file_url
from helpdesk.models import Delivery, Inbox, Message
from helpdesk.services.messages import message_create_agent_reply, message_create_note
from helpdesk.tasks import message_deliver
from tests.factories import ConversationFactory, InboxFactory, UserFactory
from tests.support.callback_receiver import CallbackReceiver
from tests.support.fake_files import JPEG
from tests.support.fake_provider import Answer, FakeProvider, http_500, slack_error
from tests.support.outbox import delivery_of

pytestmark = pytest.mark.django_db

PDF = b"%PDF-1.7\n" + b"1 0 obj <<>> endobj\n" * 40
BOT_TOKEN = "7000000001:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
WA_TOKEN = "EAAGm0PX4ZCpsBAKZCZA0ZD"
PHONE_NUMBER_ID = "106540352242922"
SLACK_TOKEN = "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy"


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path) -> Path:
    settings.MEDIA_ROOT = str(tmp_path)
    return tmp_path


@pytest.fixture
def provider():
    with FakeProvider() as fake:
        yield fake


def reply_with_files(inbox: Inbox, source_id: str, content: str = "Here are your documents") -> Message:
    conversation = ConversationFactory(contact_inbox__inbox=inbox, contact_inbox__source_id=source_id)
    files = [
        SimpleUploadedFile("receipt.pdf", PDF, "application/pdf"),
        SimpleUploadedFile("photo.jpg", JPEG, "image/jpeg"),
    ]
    return message_create_agent_reply(
        conversation=conversation, user=UserFactory(), content=content, files=files
    )


def form_parts(request: dict) -> dict[str, tuple[str | None, bytes]]:
    """A recorded multipart/form-data body: field name -> (file name, bytes)."""
    raw = f"Content-Type: {request['headers']['Content-Type']}\r\n\r\n".encode() + request["body"]
    message = BytesParser(policy=HTTP).parsebytes(raw)
    parts = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        parts[name] = (part.get_filename(), part.get_payload(decode=True))
    return parts


def telegram_ok(message_id: int) -> Answer:
    return Answer(200, {"ok": True, "result": {"message_id": message_id, "chat": {"id": 5}, "date": 1}})


# ---- Telegram ------------------------------------------------------------------------------------------------


def test_telegram_sends_the_text_then_a_document_and_a_photo_as_multipart_uploads(provider):
    inbox = InboxFactory(
        channel_type=Inbox.ChannelType.TELEGRAM,
        access_token=BOT_TOKEN,
        provider_config={"api_base_url": provider.base_url},
    )
    message = reply_with_files(inbox, "5112233445")
    provider.script("/sendDocument", telegram_ok(2001))
    provider.script("/sendPhoto", telegram_ok(2002))
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    paths = [request["path"] for request in provider.requests]
    assert paths == [f"/bot{BOT_TOKEN}/{method}" for method in ("sendMessage", "sendDocument", "sendPhoto")]
    assert provider.requests[0]["json"]["text"] == "Here are your documents"
    document, photo = form_parts(provider.requests[1]), form_parts(provider.requests[2])
    assert document["chat_id"] == (None, b"5112233445")
    assert document["document"] == ("receipt.pdf", PDF)
    assert photo["photo"] == ("photo.jpg", JPEG)
    assert delivery_of(message).provider_message_id == "1001,2001,2002"


def test_telegram_retry_after_a_failed_file_resends_only_that_file(provider):
    inbox = InboxFactory(
        channel_type=Inbox.ChannelType.TELEGRAM,
        access_token=BOT_TOKEN,
        provider_config={"api_base_url": provider.base_url},
    )
    message = reply_with_files(inbox, "5112233445")
    provider.script("/sendDocument", telegram_ok(2001))
    provider.script("/sendPhoto", http_500(), telegram_ok(2003))
    with pytest.raises(Retry):
        message_deliver(message.id)
    assert delivery_of(message).provider_message_id == "1001,2001"
    assert "part 3 of 3" in delivery_of(message).error
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    methods = [request["path"].rpartition("/")[2] for request in provider.requests]
    assert methods == ["sendMessage", "sendDocument", "sendPhoto", "sendPhoto"]
    assert delivery_of(message).provider_message_id == "1001,2001,2003"


def test_a_reply_of_files_alone_sends_no_empty_text(provider):
    inbox = InboxFactory(
        channel_type=Inbox.ChannelType.TELEGRAM,
        access_token=BOT_TOKEN,
        provider_config={"api_base_url": provider.base_url},
    )
    message = reply_with_files(inbox, "5112233445", content="")
    provider.script("/sendDocument", telegram_ok(2001))
    provider.script("/sendPhoto", telegram_ok(2002))
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    assert [r["path"].rpartition("/")[2] for r in provider.requests] == ["sendDocument", "sendPhoto"]


def test_telegram_sends_a_photo_it_refuses_as_a_photo_again_as_a_document(provider):
    inbox = InboxFactory(
        channel_type=Inbox.ChannelType.TELEGRAM,
        access_token=BOT_TOKEN,
        provider_config={"api_base_url": provider.base_url},
    )
    message = reply_with_files(inbox, "5112233445")
    dimensions = {"ok": False, "error_code": 400, "description": "Bad Request: PHOTO_INVALID_DIMENSIONS"}
    provider.script("/sendDocument", telegram_ok(2001), telegram_ok(2002))
    provider.script("/sendPhoto", Answer(400, dimensions))
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    methods = [request["path"].rpartition("/")[2] for request in provider.requests]
    assert methods == ["sendMessage", "sendDocument", "sendPhoto", "sendDocument"]
    assert form_parts(provider.requests[3])["document"] == ("photo.jpg", JPEG)
    assert delivery_of(message).provider_message_id == "1001,2001,2002"


# ---- WhatsApp ------------------------------------------------------------------------------------------------


def test_whatsapp_uploads_each_file_then_sends_a_document_and_an_image_naming_it(provider):
    inbox = InboxFactory(
        channel_type=Inbox.ChannelType.WHATSAPP,
        access_token=WA_TOKEN,
        provider_config={"phone_number_id": PHONE_NUMBER_ID, "api_base_url": provider.base_url},
    )
    message = reply_with_files(inbox, "16505551234")
    provider.script("/media", Answer(200, {"id": "media-pdf-1"}), Answer(200, {"id": "media-jpg-2"}))
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    paths = [request["path"].rpartition("/")[2] for request in provider.requests]
    assert paths == ["messages", "media", "messages", "media", "messages"]
    upload = form_parts(provider.requests[1])
    assert upload["messaging_product"] == (None, b"whatsapp")
    assert upload["type"] == (None, b"application/pdf")
    assert upload["file"] == ("receipt.pdf", PDF)
    assert provider.requests[1]["headers"]["Authorization"] == f"Bearer {WA_TOKEN}"
    document, image = provider.requests[2]["json"], provider.requests[4]["json"]
    assert document["to"] == "16505551234"
    assert document["type"] == "document"
    assert document["document"] == {"id": "media-pdf-1", "filename": "receipt.pdf"}
    assert image["type"] == "image"
    assert image["image"] == {"id": "media-jpg-2"}
    assert delivery_of(message).status == Delivery.Status.SENT
    assert len(delivery_of(message).provider_message_id.split(",")) == 3


def test_whatsapp_refused_upload_fails_the_delivery_for_good_with_our_wording(provider):
    inbox = InboxFactory(
        channel_type=Inbox.ChannelType.WHATSAPP,
        access_token=WA_TOKEN,
        provider_config={"phone_number_id": PHONE_NUMBER_ID, "api_base_url": provider.base_url},
    )
    message = reply_with_files(inbox, "16505551234")
    provider.script("/media", Answer(400, {"error": {"code": 131009, "message": "<b>bad</b>"}}))
    assert message_deliver.apply(args=[message.id]).get() == "failed"
    error = delivery_of(message).error
    assert error == "part 2 of 3: WhatsApp media upload HTTP 400 code 131009: a parameter value is not valid"


# ---- Slack ---------------------------------------------------------------------------------------------------


def test_slack_gets_an_upload_url_uploads_the_bytes_and_shares_each_file_in_the_thread(provider):
    inbox = InboxFactory(
        channel_type=Inbox.ChannelType.SLACK,
        access_token=SLACK_TOKEN,
        provider_config={"api_base_url": provider.base_url},
    )
    message = reply_with_files(inbox, "C0LAN2Q65:U061F7AUR:1700000000.000100")
    for n in (1, 2):
        provider.script(
            "/files.getUploadURLExternal",
            Answer(
                200, {"ok": True, "upload_url": f"{provider.base_url}/upload/v1/F{n}", "file_id": f"F{n}"}
            ),
        )
        provider.script(f"/upload/v1/F{n}", Answer(200, b"OK - 100"))
        provider.script(
            "/files.completeUploadExternal", Answer(200, {"ok": True, "files": [{"id": f"F{n}"}]})
        )
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    paths = [request["path"] for request in provider.requests]
    assert paths == [
        "/api/chat.postMessage",
        "/api/files.getUploadURLExternal",
        "/upload/v1/F1",
        "/api/files.completeUploadExternal",
        "/api/files.getUploadURLExternal",
        "/upload/v1/F2",
        "/api/files.completeUploadExternal",
    ]
    asked = provider.requests[1]
    assert asked["headers"]["Authorization"] == f"Bearer {SLACK_TOKEN}"
    assert asked["body"] == f"filename=receipt.pdf&length={len(PDF)}".encode()
    assert form_parts(provider.requests[2])["file"] == ("receipt.pdf", PDF)
    assert "Authorization" not in provider.requests[2]["headers"]  # the upload URL carries its own grant
    assert provider.requests[3]["json"] == {
        "files": [{"id": "F1", "title": "receipt.pdf"}],
        "channel_id": "C0LAN2Q65",
        "thread_ts": "1700000000.000100",
    }
    assert delivery_of(message).provider_message_id.split(",")[1:] == ["F1", "F2"]


def test_slack_share_refused_for_good_names_slacks_error_code(provider):
    inbox = InboxFactory(
        channel_type=Inbox.ChannelType.SLACK,
        access_token=SLACK_TOKEN,
        provider_config={"api_base_url": provider.base_url},
    )
    message = reply_with_files(inbox, "C0LAN2Q65:U061F7AUR")
    provider.script("/files.getUploadURLExternal", slack_error("not_in_channel"))
    assert message_deliver.apply(args=[message.id]).get() == "failed"
    assert delivery_of(message).error == "part 2 of 3: Slack HTTP 200: not_in_channel"


# ---- API channel: signed links -------------------------------------------------------------------------------


def test_api_channel_event_lists_signed_links_that_open_the_files_without_a_login(client):
    with CallbackReceiver() as receiver:
        inbox = InboxFactory(channel_type=Inbox.ChannelType.API, callback_url=receiver.url)
        message = reply_with_files(inbox, "customer-7")
        assert message_deliver.apply(args=[message.id]).get() == "sent"
    [event] = receiver.events
    links = event["json"]["attachments"]
    assert [(a["file_name"], a["content_type"], a["size"]) for a in links] == [
        ("receipt.pdf", "application/pdf", len(PDF)),
        ("photo.jpg", "image/jpeg", len(JPEG)),
    ]
    path = urlsplit(links[0]["url"]).path
    response = client.get(path)
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == PDF
    assert response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"] == 'attachment; filename="receipt.pdf"'
    assert response["X-Content-Type-Options"] == "nosniff"
    forged = path.rstrip("/")[:-1] + ("A" if not path.rstrip("/").endswith("A") else "B") + "/"
    assert client.get(forged).status_code == 404


def test_a_notes_file_has_no_shared_link_and_an_event_without_files_is_unchanged(client):
    inbox = InboxFactory(channel_type=Inbox.ChannelType.API)
    conversation = ConversationFactory(contact_inbox__inbox=inbox)
    note = message_create_note(
        conversation=conversation,
        content="internal",
        user=UserFactory(),
        files=[SimpleUploadedFile("scan.pdf", PDF)],
    )
    url = shared_file_url(note.files.get().pk)
    assert client.get(urlsplit(url).path).status_code == 404
    plain = message_create_agent_reply(conversation=conversation, user=UserFactory(), content="hi")
    assert "attachments" not in outbound_event(plain)


def test_a_file_gone_from_the_storage_fails_the_delivery_for_good_saying_which(provider, media_root):
    inbox = InboxFactory(
        channel_type=Inbox.ChannelType.TELEGRAM,
        access_token=BOT_TOKEN,
        provider_config={"api_base_url": provider.base_url},
    )
    message = reply_with_files(inbox, "5112233445")
    first = message.files.order_by("id").first()
    first.file.storage.delete(first.file.name)
    assert message_deliver.apply(args=[message.id]).get() == "failed"
    assert delivery_of(message).error == "part 2 of 3: The file receipt.pdf is no longer stored."
    assert [r["path"].rpartition("/")[2] for r in provider.requests] == ["sendMessage"]


def test_e_mail_carries_the_files_as_attachments_of_the_reply_mail():
    inbox = InboxFactory(
        channel_type=Inbox.ChannelType.EMAIL, provider_config={"from_address": "support@shop.example"}
    )
    message = reply_with_files(inbox, "ann@example.com")
    mail = smtp.build(Message.objects.get(pk=message.pk))
    parts = [(p.get_filename(), p.get_content_type(), p.get_content()) for p in mail.iter_attachments()]
    assert parts == [("receipt.pdf", "application/pdf", PDF), ("photo.jpg", "image/jpeg", JPEG)]
