"""Files inside a customer's mail (helpdesk.channels.email.mime `files`, stored by
helpdesk.services.attachments.attachment_store_received through the same checks as a downloaded file): a Gmail mail
with an inline photo, an attached photo, a PDF and a program named .png. Photos are stored; a refused type, a file
whose bytes are not what it claims and a file over the size limit are notes on the message with the reason; the mail
is stored every time."""

from __future__ import annotations

from email.message import EmailMessage

import pytest

from helpdesk.channels.email.channel import EmailChannel
from helpdesk.channels.email.mime import MAX_FILES, parse_mail
from helpdesk.models import Attachment, Membership, Message
from tests.factories import MembershipFactory, UserFactory
from tests.helpdesk.channels_email.support import email_inbox, post, signed_fields
from tests.helpdesk.channels_email.test_mime import fixture
from tests.support.fake_files import PNG

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path) -> None:
    settings.MEDIA_ROOT = str(tmp_path)  # megabytes of photos: not into var/media


def deliver(client, raw: bytes) -> Message:
    response = post(client, email_inbox(), signed_fields(raw))
    assert response.status_code == 200, response.content
    return Message.objects.get(pk=response.json()["message_ids"][0])


def files_of(message: Message) -> dict[str, tuple[str, str]]:
    rows = Attachment.objects.filter(message=message).exclude(file_name="message.html")
    return {row.file_name: (row.status, row.error) for row in rows}


def test_the_files_of_a_mail_are_found_besides_its_text():
    mail = parse_mail(fixture("gmail_attachments"))
    assert [(f.file_name, f.content_type) for f in mail.files] == [
        ("inline.png", "image/png"),
        ("lamp.png", "image/png"),
        ("receipt.pdf", "application/pdf"),
        ("holiday.png", "image/png"),
    ]
    assert mail.text == "The lamp arrived broken, photos attached. The receipt is in the PDF."


def test_photos_are_stored_and_refused_files_are_noted_with_the_reason(client):
    message = deliver(client, fixture("gmail_attachments"))

    assert message.content == "The lamp arrived broken, photos attached. The receipt is in the PDF."
    assert files_of(message) == {
        "inline.png": ("stored", ""),
        "lamp.png": ("stored", ""),
        "receipt.pdf": ("refused", "files of type application/pdf are not accepted"),
        "holiday.png": ("refused", "the file's content is not an accepted image or audio format"),
    }
    stored = Attachment.objects.get(message=message, file_name="lamp.png")
    assert (stored.kind, stored.content_type) == ("image", "image/png")
    assert stored.file.open("rb").read().startswith(b"\x89PNG")
    assert {entry["file_name"] for entry in message.attachments} >= {"lamp.png", "receipt.pdf"}
    # A refused file's bytes are kept nowhere: its row is the note, with no stored file behind it.
    refused = Attachment.objects.filter(message=message, status=Attachment.Status.REFUSED)
    assert refused.count() == 2 and all(not row.file.name for row in refused)


def test_a_file_over_the_size_limit_is_noted_and_the_mail_stored(client, settings):
    settings.HELPDESK = {**settings.HELPDESK, "ATTACHMENT_MAX_BYTES": 50}

    message = deliver(client, fixture("gmail_attachments"))

    assert message.content.startswith("The lamp arrived broken")
    status, error = files_of(message)["lamp.png"]
    assert (status, error) == ("refused", "the file is larger than 50 bytes")


def test_the_dashboard_shows_each_file_or_why_it_was_refused(client):
    message = deliver(client, fixture("gmail_attachments"))
    agent = UserFactory()
    MembershipFactory(account=message.account, user=agent, role=Membership.Role.AGENT)
    client.force_login(agent)

    page = client.get(
        f"/app/accounts/{message.account_id}/conversations/{message.conversation_id}/"
    ).content.decode()

    lamp = Attachment.objects.get(message=message, file_name="lamp.png")
    assert f"/app/accounts/{message.account_id}/attachments/{lamp.id}/" in page
    assert "“receipt.pdf” refused: files of type application/pdf are not accepted" in page


def test_a_mail_with_very_many_files_keeps_the_first_ones():
    part = (
        "--b\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; "
        'filename="f{n}.bin"\r\nContent-Transfer-Encoding: base64\r\n\r\nAAAA\r\n'
    )
    raw = (
        'From: a@b.example\r\nMessage-ID: <many@b.example>\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n'
        "--b\r\nContent-Type: text/plain\r\n\r\nsee files\r\n"
        + "".join(part.format(n=n) for n in range(MAX_FILES + 5))
        + "--b--\r\n"
    ).encode()
    mail = parse_mail(raw)
    assert mail.text == "see files"
    assert [f.file_name for f in mail.files] == [f"f{n}.bin" for n in range(MAX_FILES)]


def mail_with(files: list[tuple[str, bytes]]) -> bytes:
    mail = EmailMessage()
    mail["From"] = "Ann Lee <ann@example.com>"
    mail["To"] = "help@shop.example"
    mail["Subject"] = "Photos of the damage"
    mail["Message-ID"] = "<big-1@example.com>"
    mail.set_content("The photos are attached.")
    for name, data in files:
        mail.add_attachment(data, maintype="image", subtype="png", filename=name)
    return mail.as_bytes()


def test_a_mail_far_over_the_servers_request_limit_is_stored_with_its_photos(client, settings):
    # The usual 256 KiB request limit would refuse it; Mailgun would retry for hours, then drop the mail.
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE == 256 * 1024
    photo = PNG + bytes(range(256)) * (3 * 4096)  # 3 MB
    video_sized = PNG + b"\0" * (11 * 1024 * 1024)  # over the 10 MB a customer file may weigh
    raw = mail_with([("damage.png", photo), ("huge.png", video_sized)])
    assert len(raw) > 18 * 1024 * 1024

    message = deliver(client, raw)

    assert message.content == "The photos are attached."
    assert files_of(message) == {
        "damage.png": ("stored", ""),
        "huge.png": ("refused", f"the file is larger than {10 * 1024 * 1024} bytes"),
    }
    assert Attachment.objects.get(file_name="damage.png").file.read() == photo


def test_a_request_over_the_e_mail_channels_own_limit_is_refused_with_400_and_nothing_stored(
    client, monkeypatch
):
    monkeypatch.setattr(EmailChannel, "request_limit", 300_000)
    raw = mail_with([("damage.png", PNG + b"\0" * 400_000)])

    response = post(client, email_inbox(), signed_fields(raw))

    assert (response.status_code, response.json()["error"]) == (400, "too_large")
    assert Message.objects.count() == 0
