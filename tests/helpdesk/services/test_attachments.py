"""Files customers send: recorded at ingest from the real webhook payloads, fetched from fake Telegram, WhatsApp
and Slack file APIs on 127.0.0.1 (their real answer shapes), checked for size and type, stored or refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.storage import default_storage

from config import celery_app
from helpdesk.channels import slack, telegram, whatsapp
from helpdesk.models import Attachment, Inbox
from helpdesk.services.attachments import attachment_fetch, attachments_ready, sniff_content_type
from helpdesk.services.messages import message_ingest
from helpdesk.tasks import attachment_fetch as attachment_fetch_task
from tests.factories import InboxFactory
from tests.support.fake_files import (
    HTML_PAGE,
    JPEG,
    OGG_OPUS,
    PNG,
    WINDOWS_EXE,
    FakeFileHost,
    Served,
)
from tests.support.webhook_fixtures import fixture_json

pytestmark = pytest.mark.django_db

TG_TOKEN = "123456:AAH-secret-bot-token"
WA_TOKEN = "EAAG-whatsapp-access-token"
SLACK_TOKEN = "xoxb-slack-bot-token"
TG_PHOTO_ID = "AgACAgIAAxkBAAIBZ2ZmLarge"  # the largest size in telegram/photo_with_caption.json
WA_AUDIO_ID = "1251087596051093"  # whatsapp/audio_voice.json
SLACK_FILE_ID = "F0LAN7T2A"  # slack/file_share.json


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path) -> Path:
    settings.MEDIA_ROOT = str(tmp_path)
    return tmp_path


def stored_files(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if path.is_file()]


@pytest.fixture
def host():
    with FakeFileHost() as fake:
        yield fake


def limit(settings, max_bytes: int) -> None:
    settings.HELPDESK = {**settings.HELPDESK, "ATTACHMENT_MAX_BYTES": max_bytes}


def telegram_photo(host: FakeFileHost) -> Attachment:
    inbox = InboxFactory(
        channel_type=Inbox.ChannelType.TELEGRAM,
        access_token=TG_TOKEN,
        provider_config={"api_base_url": host.base_url},
    )
    [inbound] = telegram.parse(fixture_json("telegram", "photo_with_caption"))
    result = message_ingest(inbox=inbox, inbound=inbound)
    return result.message.files.get()


def whatsapp_media(host: FakeFileHost, fixture: str = "audio_voice") -> Attachment:
    inbox = InboxFactory(
        channel_type=Inbox.ChannelType.WHATSAPP,
        access_token=WA_TOKEN,
        provider_config={"api_base_url": host.base_url, "phone_number_id": "106540352242922"},
    )
    [inbound] = whatsapp.parse(fixture_json("whatsapp", fixture), phone_number_id="106540352242922")
    return message_ingest(inbox=inbox, inbound=inbound).message.files.get()


def slack_file(host: FakeFileHost) -> Attachment:
    inbox = InboxFactory(
        channel_type=Inbox.ChannelType.SLACK,
        access_token=SLACK_TOKEN,
        provider_config={"api_base_url": host.base_url},
    )
    [inbound] = slack.parse(fixture_json("slack", "file_share"))
    return message_ingest(inbox=inbox, inbound=inbound).message.files.get()


# ---- ingest ---------------------------------------------------------------------------------------------------


def test_ingest_records_a_pending_attachment_and_queues_its_fetch_after_commit(
    host, monkeypatch, django_capture_on_commit_callbacks
):
    queued: list[tuple[str, list[int]]] = []
    monkeypatch.setattr(celery_app, "send_task", lambda name, args: queued.append((name, args)))
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        attachment = telegram_photo(host)
    assert (attachment.kind, attachment.status, attachment.provider_ref) == ("image", "pending", TG_PHOTO_ID)
    assert attachment.account_id == attachment.message.account_id
    assert queued == []  # nothing before commit
    for callback in callbacks:
        callback()
    assert queued == [("helpdesk.tasks.attachment_fetch", [attachment.pk])]
    assert attachment_fetch_task.name == "helpdesk.tasks.attachment_fetch"
    assert host.requests == []  # the webhook itself downloads nothing


def test_api_channel_links_record_no_attachment(host):
    inbox = InboxFactory(channel_type=Inbox.ChannelType.API)
    from helpdesk.channels.base import InboundContact, InboundMessage

    inbound = InboundMessage(
        "api-1", InboundContact("c1"), "see photo", [{"type": "image", "url": "https://x.example/a.png"}]
    )
    message = message_ingest(inbox=inbox, inbound=inbound).message
    assert not message.files.exists()


# ---- the three providers ----------------------------------------------------------------------------------------


def test_telegram_photo_is_fetched_with_getfile_and_stored_under_an_unguessable_name(
    host, media_root, caplog
):
    host.telegram_file(JPEG, token=TG_TOKEN, file_id=TG_PHOTO_ID)
    attachment = telegram_photo(host)

    assert attachment_fetch(attachment).status == "stored"

    attachment.refresh_from_db()
    assert (attachment.status, attachment.content_type, attachment.size, attachment.error) == (
        "stored",
        "image/jpeg",
        len(JPEG),
        "",
    )
    assert host.paths()[0] == f"/bot{TG_TOKEN}/getFile"
    assert host.requests[0].query == {"file_id": [TG_PHOTO_ID]}
    with attachment.file.open("rb") as handle:
        assert handle.read() == JPEG
    name = attachment.file.name
    assert name.startswith(f"attachments/{attachment.account_id}/") and name.endswith(".jpg")
    assert TG_PHOTO_ID not in name and TG_TOKEN not in name
    assert len(name.rpartition("/")[2]) >= 32  # 24 random bytes, url-safe
    assert TG_TOKEN not in caplog.text


def test_whatsapp_voice_note_is_fetched_with_the_bearer_token_on_both_requests(host):
    attachment = whatsapp_media(host, "image_with_caption")
    host.whatsapp_media(OGG_OPUS, media_id=WA_AUDIO_ID, mime_type="audio/ogg; codecs=opus")
    attachment = whatsapp_media(host)
    assert attachment.kind == "audio"

    assert attachment_fetch(attachment).status == "stored"

    attachment.refresh_from_db()
    assert (attachment.content_type, attachment.kind) == ("audio/ogg", "audio")
    assert host.paths() == [f"/v21.0/{WA_AUDIO_ID}", "/whatsapp_business/attachments/"]
    assert [seen.headers.get("Authorization") for seen in host.requests] == [f"Bearer {WA_TOKEN}"] * 2
    assert default_storage.open(attachment.file.name).read() == OGG_OPUS


def test_slack_file_is_fetched_with_files_info_and_url_private_download(host):
    host.slack_file(PNG, file_id=SLACK_FILE_ID, mimetype="image/png", name="error.png")
    attachment = slack_file(host)
    assert (attachment.kind, attachment.file_name) == ("image", "error.png")

    assert attachment_fetch(attachment).status == "stored"

    attachment.refresh_from_db()
    assert attachment.content_type == "image/png"
    assert host.paths() == ["/api/files.info", f"/files-pri/T061EG9R6-{SLACK_FILE_ID}/download/error.png"]
    assert host.requests[0].query == {"file": [SLACK_FILE_ID]}
    assert [seen.headers.get("Authorization") for seen in host.requests] == [f"Bearer {SLACK_TOKEN}"] * 2


# ---- size ------------------------------------------------------------------------------------------------------


def test_too_large_by_the_webhooks_declared_size_is_refused_without_any_request(host, settings, media_root):
    limit(settings, 1000)  # the fixture's photo declares file_size 98211
    host.telegram_file(JPEG, token=TG_TOKEN, file_id=TG_PHOTO_ID)
    attachment = telegram_photo(host)

    assert attachment_fetch(attachment).status == "refused"

    attachment.refresh_from_db()
    assert attachment.error == "the file is larger than 1000 bytes"
    assert host.requests == []
    assert stored_files(media_root) == [] and not attachment.file


def test_too_large_by_the_providers_declared_size_is_refused_without_downloading(host, settings, media_root):
    limit(settings, 200_000)
    host.telegram_file(JPEG, token=TG_TOKEN, file_id=TG_PHOTO_ID, declared_size=300_000)
    attachment = telegram_photo(host)

    assert attachment_fetch(attachment).status == "refused"

    attachment.refresh_from_db()
    assert attachment.error == "the file is larger than 200000 bytes"
    assert host.paths() == [f"/bot{TG_TOKEN}/getFile"]  # the file itself was never requested
    assert stored_files(media_root) == [] and not attachment.file


def test_too_large_by_content_length_is_refused_and_nothing_stored(host, settings, media_root):
    limit(settings, 1000)
    attachment = whatsapp_media(host, "image_with_caption")
    # The metadata says it is small; the download's header says otherwise.
    host.whatsapp_media(JPEG, media_id=attachment.provider_ref, mime_type="image/jpeg", declared_size=10)

    assert attachment_fetch(attachment).status == "refused"

    attachment.refresh_from_db()
    assert (attachment.status, attachment.error) == ("refused", "the file is larger than 1000 bytes")
    assert stored_files(media_root) == []


def test_too_large_by_the_bytes_streamed_is_refused_and_nothing_stored(host, settings, media_root):
    limit(settings, 1000)
    # No Content-Length at all (chunked): only counting the bytes while streaming finds out.
    attachment = whatsapp_media(host, "image_with_caption")
    host.whatsapp_media(
        Served(JPEG * 3, length=None),
        media_id=attachment.provider_ref,
        mime_type="image/jpeg",
        declared_size=10,
    )

    assert attachment_fetch(attachment).status == "refused"

    attachment.refresh_from_db()
    assert (attachment.status, attachment.error) == ("refused", "the file is larger than 1000 bytes")
    assert stored_files(media_root) == []


def test_a_file_under_the_limit_streamed_without_length_is_stored(host, settings):
    limit(settings, 10_000)
    attachment = whatsapp_media(host, "image_with_caption")
    host.whatsapp_media(Served(JPEG, length=None), media_id=attachment.provider_ref, mime_type="image/jpeg")
    assert attachment_fetch(attachment).status == "stored"


# ---- type --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("disguised", [WINDOWS_EXE, HTML_PAGE], ids=["exe", "html"])
def test_a_file_claiming_to_be_a_jpeg_that_is_not_one_is_refused(host, media_root, disguised):
    attachment = whatsapp_media(host, "image_with_caption")
    host.whatsapp_media(
        Served(disguised, content_type="image/jpeg"), media_id=attachment.provider_ref, mime_type="image/jpeg"
    )

    assert attachment_fetch(attachment).status == "refused"

    attachment.refresh_from_db()
    assert attachment.error == "the file's content is not an accepted image or audio format"
    assert stored_files(media_root) == []


def test_a_declared_type_we_do_not_accept_is_refused_before_download(host, media_root):
    attachment = whatsapp_media(host, "document")  # the fixture declares application/pdf already
    host.whatsapp_media(PNG, media_id=attachment.provider_ref, mime_type="application/pdf")

    assert attachment_fetch(attachment).status == "refused"

    attachment.refresh_from_db()
    assert attachment.error == "files of type application/pdf are not accepted"
    assert host.requests == []
    assert stored_files(media_root) == []


@pytest.mark.parametrize(
    ("head", "kind", "expected"),
    [
        (JPEG, "", "image/jpeg"),
        (PNG, "", "image/png"),
        (b"GIF89a\x01\x00", "", "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "", "image/webp"),
        (b"RIFF\x00\x00\x00\x00WAVEfmt ", "", "audio/wav"),
        (OGG_OPUS, "", "audio/ogg"),
        (b"ID3\x04\x00", "", "audio/mpeg"),
        (b"\xff\xfb\x90\x64", "", "audio/mpeg"),
        (b"\x00\x00\x00\x20ftypM4A \x00", "", "audio/mp4"),
        (b"\x00\x00\x00\x20ftypisom\x00", "audio", "audio/mp4"),
        (b"\x00\x00\x00\x20ftypisom\x00", "video", None),
        (b"\x1a\x45\xdf\xa3\x01", "audio", "audio/webm"),
        (b"\x1a\x45\xdf\xa3\x01", "video", None),
        (WINDOWS_EXE, "", None),
        (HTML_PAGE, "", None),
        (b"%PDF-1.7", "", None),
        (b"<svg xmlns", "", None),
    ],
)
def test_sniffing_recognises_only_accepted_formats(head, kind, expected):
    assert sniff_content_type(head[:16], kind=kind) == expected


# ---- the outbound policy ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    ["https://10.20.30.40/whatsapp_business/attachments/?mid=1", "https://169.254.169.254/latest/meta-data/"],
    ids=["private", "metadata"],
)
def test_a_media_url_on_a_private_address_is_refused_by_the_outbound_policy(host, media_root, url):
    attachment = whatsapp_media(host, "image_with_caption")
    host.whatsapp_media(JPEG, media_id=attachment.provider_ref, mime_type="image/jpeg", url=url)

    assert attachment_fetch(attachment).status == "refused"

    attachment.refresh_from_db()
    assert attachment.error.startswith("refused by the outbound policy: address is ")
    assert host.paths() == [
        f"/v21.0/{attachment.provider_ref}"
    ]  # the provider was asked; the private address never was
    assert stored_files(media_root) == []


def test_a_loopback_provider_url_not_on_the_allowlist_is_refused(host, settings, media_root):
    host.telegram_file(JPEG, token=TG_TOKEN, file_id=TG_PHOTO_ID)
    attachment = telegram_photo(host)
    settings.HELPDESK = {**settings.HELPDESK, "OUTBOUND_ALLOWED_HOSTS": []}

    assert attachment_fetch(attachment).status == "refused"

    attachment.refresh_from_db()
    assert attachment.error.startswith("refused by the outbound policy")
    assert TG_TOKEN not in attachment.error
    assert host.requests == []


# ---- failures and retries --------------------------------------------------------------------------------------


def test_a_provider_outage_is_failed_transient_and_keeps_nothing(host, media_root):
    served = host.telegram_file(JPEG, token=TG_TOKEN, file_id=TG_PHOTO_ID)
    host.routes[f"/bot{TG_TOKEN}/getFile?file_id={TG_PHOTO_ID}"].fail_first = 1
    attachment = telegram_photo(host)

    result = attachment_fetch(attachment)

    assert (result.status, result.transient) == ("failed", True)
    attachment.refresh_from_db()
    assert attachment.error == "Telegram HTTP 500"
    assert served.served == 0 and stored_files(media_root) == []


def test_the_task_retries_a_failed_fetch_until_it_is_stored(host, settings):
    settings.HELPDESK = {
        **settings.HELPDESK,
        "DELIVERY_BACKOFF_SECONDS": 0.01,
        "DELIVERY_BACKOFF_MAX_SECONDS": 0.01,
    }
    host.telegram_file(Served(JPEG, fail_first=2), token=TG_TOKEN, file_id=TG_PHOTO_ID)
    attachment = telegram_photo(host)

    attachment_fetch_task.apply(args=[attachment.pk])

    attachment.refresh_from_db()
    assert attachment.status == "stored"
    assert host.paths().count(f"/bot{TG_TOKEN}/getFile") == 3


def test_the_task_gives_up_after_the_configured_retries(host, settings):
    settings.HELPDESK = {
        **settings.HELPDESK,
        "DELIVERY_BACKOFF_SECONDS": 0.01,
        "DELIVERY_BACKOFF_MAX_SECONDS": 0.01,
        "ATTACHMENT_FETCH_MAX_RETRIES": 2,
    }
    host.telegram_file(Served(JPEG, fail_first=100), token=TG_TOKEN, file_id=TG_PHOTO_ID)
    attachment = telegram_photo(host)

    attachment_fetch_task.apply(args=[attachment.pk])

    attachment.refresh_from_db()
    assert (attachment.status, attachment.error) == ("failed", "the file download answered HTTP 500")
    assert host.paths().count(f"/bot{TG_TOKEN}/getFile") == 3  # the first try and two retries


def test_a_stored_attachment_is_not_fetched_again(host):
    host.telegram_file(JPEG, token=TG_TOKEN, file_id=TG_PHOTO_ID)
    attachment = telegram_photo(host)
    attachment_fetch(attachment)
    requests = len(host.requests)

    assert attachment_fetch(attachment).status == "stored"
    attachment_fetch_task.apply(args=[attachment.pk])
    assert len(host.requests) == requests


def test_attachments_ready_fetches_only_the_pending_files_of_the_given_messages(host):
    host.telegram_file(JPEG, token=TG_TOKEN, file_id=TG_PHOTO_ID)
    attachment = telegram_photo(host)
    other = whatsapp_media(host)  # never served: it would fail if it were fetched

    attachments_ready(message_ids=[attachment.message_id], timeout=5)

    attachment.refresh_from_db()
    other.refresh_from_db()
    assert (attachment.status, other.status) == ("stored", "pending")
    assert not any(path.startswith("/v21.0") for path in host.paths())
