"""Files people attach to a reply or a note: checked (count, each channel's size limit, the bytes' type) before
anything is stored, stored as the message's attachments, and nothing at all stored when one file is refused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile, TemporaryUploadedFile
from django.utils import translation

from helpdesk.channels.outbound_files import MAX_FILES, MB
from helpdesk.models import Attachment, Delivery, Inbox, Message
from helpdesk.services.messages import message_create_agent_reply, message_create_note
from helpdesk.services.reply_files import FileRefused
from tests.factories import ConversationFactory, UserFactory
from tests.support.fake_files import JPEG, PNG, WINDOWS_EXE

pytestmark = pytest.mark.django_db

PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n" + b"1 0 obj <<>> endobj\n" * 50


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path) -> Path:
    settings.MEDIA_ROOT = str(tmp_path)
    return tmp_path


def stored_files(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if path.is_file()]


def conversation_on(channel_type: str):
    return ConversationFactory(contact_inbox__inbox__channel_type=channel_type)


def big_file(name: str, head: bytes, size: int) -> TemporaryUploadedFile:
    """A real upload of `size` bytes on disk (sparse after its first bytes), as Django hands a large one over."""
    upload = TemporaryUploadedFile(name, "application/octet-stream", size, None)
    upload.write(head)
    upload.truncate(size)
    upload.seek(0)
    return upload


def test_reply_files_are_stored_listed_and_queued_with_the_reply(media_root):
    conversation = conversation_on(Inbox.ChannelType.TELEGRAM)
    files = [
        SimpleUploadedFile("receipt.pdf", PDF, "application/pdf"),
        SimpleUploadedFile("photo.png", PNG, "image/png"),
    ]
    message = message_create_agent_reply(
        conversation=conversation, user=UserFactory(), content="Here you go", files=files
    )
    rows = list(message.files.order_by("id"))
    assert [(r.file_name, r.content_type, r.kind, r.status) for r in rows] == [
        ("receipt.pdf", "application/pdf", "file", "stored"),
        ("photo.png", "image/png", "image", "stored"),
    ]
    assert [row.file.read() for row in rows] == [PDF, PNG]
    assert [item["file_name"] for item in Message.objects.get(pk=message.pk).attachments] == [
        "receipt.pdf",
        "photo.png",
    ]
    assert Delivery.objects.get(pk=message.pk).status == Delivery.Status.QUEUED
    assert len(stored_files(media_root)) == 2


def test_a_note_keeps_its_files_and_is_never_queued(media_root):
    conversation = conversation_on(Inbox.ChannelType.WHATSAPP)
    note = message_create_note(
        conversation=conversation,
        content="the customer's invoice",
        user=UserFactory(),
        files=[SimpleUploadedFile("invoice.jpg", JPEG, "image/jpeg")],
    )
    assert note.private
    assert [row.kind for row in note.files.all()] == ["image"]
    assert not Delivery.objects.filter(pk=note.pk).exists()


def test_an_executable_is_refused_by_its_bytes_whatever_its_name_and_nothing_is_stored(media_root):
    conversation = conversation_on(Inbox.ChannelType.TELEGRAM)
    files = [
        SimpleUploadedFile("fine.png", PNG, "image/png"),
        SimpleUploadedFile("invoice.pdf", WINDOWS_EXE, "application/pdf"),
    ]
    with pytest.raises(FileRefused) as refused:
        message_create_agent_reply(conversation=conversation, user=UserFactory(), content="x", files=files)
    assert refused.value.file_name == "invoice.pdf"
    assert "“invoice.pdf” cannot be attached: only images, audio and PDF" in str(refused.value)
    assert not Message.objects.filter(conversation=conversation).exists()
    assert not Attachment.objects.exists()
    assert stored_files(media_root) == []


def test_whatsapp_takes_images_up_to_5_mb_but_documents_up_to_100_mb(media_root):
    conversation = conversation_on(Inbox.ChannelType.WHATSAPP)
    over_image_limit = 5 * MB + 1
    with pytest.raises(FileRefused) as refused:
        message_create_agent_reply(
            conversation=conversation,
            user=UserFactory(),
            content="x",
            files=[big_file("big.jpg", JPEG, over_image_limit)],
        )
    assert str(refused.value) == (
        "“big.jpg” cannot be attached: it is 5.1 MB, and WhatsApp Cloud takes files up to 5 MB."
    )
    assert stored_files(media_root) == []
    document = big_file("big.pdf", PDF, over_image_limit)
    message = message_create_agent_reply(
        conversation=conversation, user=UserFactory(), content="x", files=[document]
    )
    document.close()  # storage moved the temporary file into place, as Django does with a request's upload
    assert message.files.get().size == over_image_limit


def test_telegram_refuses_a_file_over_its_50_mb_bot_upload_limit_and_stores_nothing(media_root):
    conversation = conversation_on(Inbox.ChannelType.TELEGRAM)
    files = [SimpleUploadedFile("small.png", PNG), big_file("manual.pdf", PDF, 50 * MB + 1)]
    with pytest.raises(FileRefused, match=re.escape("it is 50.1 MB, and Telegram takes files up to 50 MB")):
        message_create_agent_reply(conversation=conversation, user=UserFactory(), content="x", files=files)
    assert not Message.objects.filter(conversation=conversation).exists()
    assert stored_files(media_root) == []


def test_too_many_files_and_an_empty_file_are_refused(media_root):
    conversation = conversation_on(Inbox.ChannelType.API)
    too_many = [SimpleUploadedFile(f"p{i}.png", PNG) for i in range(MAX_FILES + 1)]
    with pytest.raises(FileRefused, match=f"at most {MAX_FILES} files"):
        message_create_note(conversation=conversation, content="x", user=UserFactory(), files=too_many)
    with pytest.raises(FileRefused, match=re.escape("“empty.png” cannot be attached: the file is empty")):
        message_create_note(
            conversation=conversation, content="x", files=[SimpleUploadedFile("empty.png", b"")]
        )
    assert not Message.objects.filter(conversation=conversation).exists()
    assert stored_files(media_root) == []


def test_a_failed_write_deletes_the_files_already_written(media_root, monkeypatch):
    conversation = conversation_on(Inbox.ChannelType.API)
    real_create = Attachment.objects.create
    calls = []

    def failing_second(**fields):
        calls.append(fields["file_name"])
        if len(calls) == 2:
            raise RuntimeError("database went away")
        return real_create(**fields)

    monkeypatch.setattr(Attachment.objects, "create", failing_second)
    files = [SimpleUploadedFile("a.png", PNG), SimpleUploadedFile("b.png", PNG)]
    with pytest.raises(RuntimeError):
        message_create_agent_reply(conversation=conversation, user=UserFactory(), content="x", files=files)
    assert calls == ["a.png", "b.png"]
    assert stored_files(media_root) == []
    assert not Message.objects.filter(conversation=conversation).exists()


def test_e_mail_takes_at_most_25_mb_of_files_per_message_together(media_root):
    conversation = conversation_on(Inbox.ChannelType.EMAIL)
    files = [big_file(f"part{i}.pdf", PDF, 9 * MB) for i in range(3)]
    with pytest.raises(FileRefused) as refused:
        message_create_agent_reply(conversation=conversation, user=UserFactory(), content="x", files=files)
    assert str(refused.value) == ("Together the files are 27 MB, and E-mail takes up to 25 MB per message.")
    assert stored_files(media_root) == []
    message = message_create_agent_reply(
        conversation=conversation, user=UserFactory(), content="x", files=files[:2]
    )
    for upload in files:
        upload.close()
    assert message.files.count() == 2


def test_the_refusal_is_worded_in_the_persons_language(media_root):
    conversation = conversation_on(Inbox.ChannelType.WHATSAPP)
    with translation.override("zh-hans"), pytest.raises(FileRefused) as refused:
        message_create_note(
            conversation=conversation, content="x", files=[SimpleUploadedFile("run.exe", WINDOWS_EXE)]
        )
    assert (
        str(refused.value) == "无法附加“run.exe”：只能发送图片、音频和 PDF 文件（此文件不属于其中任何一种）。"
    )
