"""Files customers sent, in the dashboard: the thread shows images as thumbnails linking to the file, voice notes
as a player with their transcript, refused and failed ones with the reason; the file itself is served only to
members of the message's account, with the type our check found."""

from __future__ import annotations

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from helpdesk.models import Attachment, Message
from tests.factories import ConversationFactory, MessageFactory
from tests.support.fake_files import JPEG, OGG_OPUS

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)
    return tmp_path


def attachment(
    message: Message, *, kind: str, status: str, data: bytes = b"", content_type: str = "", **fields: object
) -> Attachment:
    name = ""
    if data:
        name = default_storage.save(f"attachments/{message.account_id}/k3y{kind}.bin", ContentFile(data))
    return Attachment.objects.create(
        account_id=message.account_id,
        message=message,
        kind=kind,
        status=status,
        provider_ref="ref",
        content_type=content_type,
        size=len(data),
        file=name,
        **fields,
    )


def customer_message(team, **fields: object) -> Message:
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    return MessageFactory(
        conversation=conversation, attachments=[{"type": "photo", "file_id": "x"}], **fields
    )


def file_url(team, item: Attachment) -> str:
    return f"/app/accounts/{team.account.id}/attachments/{item.pk}/"


def page(team, message: Message) -> str:
    return f"/app/accounts/{team.account.id}/conversations/{message.conversation_id}/"


def test_a_member_gets_the_file_with_our_type_nosniff_and_inline_disposition(agent_client, team):
    photo = attachment(
        customer_message(team), kind="image", status="stored", data=JPEG, content_type="image/jpeg"
    )

    response = agent_client.get(file_url(team, photo))

    assert response.status_code == 200
    assert b"".join(response.streaming_content) == JPEG
    assert response["Content-Type"] == "image/jpeg"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Disposition"] == f'inline; filename="image-{photo.pk}.bin"'
    assert "sandbox" in response["Content-Security-Policy"]


def test_a_member_of_another_account_gets_404(client, team, other_team):
    photo = attachment(
        customer_message(team), kind="image", status="stored", data=JPEG, content_type="image/jpeg"
    )
    client.force_login(other_team.admin)

    # Through their own account's URL and through the file's account URL alike.
    assert client.get(f"/app/accounts/{other_team.account.id}/attachments/{photo.pk}/").status_code == 404
    assert client.get(file_url(team, photo)).status_code == 404


def test_anonymous_is_sent_to_the_login_page(client, team):
    photo = attachment(
        customer_message(team), kind="image", status="stored", data=JPEG, content_type="image/jpeg"
    )

    response = client.get(file_url(team, photo))

    assert response.status_code == 302
    assert response["Location"].startswith("/auth/login/")


@pytest.mark.parametrize("status", ["pending", "refused", "failed"])
def test_a_file_that_is_not_stored_is_404(agent_client, team, status):
    item = attachment(customer_message(team), kind="image", status=status)
    assert agent_client.get(file_url(team, item)).status_code == 404


def test_the_thread_shows_thumbnail_player_transcript_and_reasons(agent_client, team):
    message = customer_message(team, content="The box arrived damaged")
    photo = attachment(message, kind="image", status="stored", data=JPEG, content_type="image/jpeg")
    voice = attachment(
        message,
        kind="audio",
        status="stored",
        data=OGG_OPUS,
        content_type="audio/ogg",
        transcript="It came <b>broken</b>",
    )
    attachment(message, kind="file", status="refused", error="files of type application/pdf are not accepted")
    attachment(message, kind="image", status="failed", error="Telegram HTTP 500")

    html = agent_client.get(page(team, message)).content.decode()

    url = file_url(team, photo)
    assert f'<a href="{url}"' in html and f'<img class="thumb" src="{url}"' in html
    assert f'<audio class="voice" controls preload="none" src="{file_url(team, voice)}">' in html
    assert "It came &lt;b&gt;broken&lt;/b&gt;" in html
    assert "refused: files of type application/pdf are not accepted" in html
    assert "could not be fetched: Telegram HTTP 500" in html
