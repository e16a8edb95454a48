"""WhatsApp Cloud API: the verification handshake, one test per notification shape through the real view,
X-Hub-Signature-256, and sends against a fake Graph API on 127.0.0.1."""

from __future__ import annotations

import json

import pytest
from celery.exceptions import Retry

from helpdesk.channels import whatsapp
from helpdesk.channels.whatsapp import SIGNATURE_HEADER, sign
from helpdesk.models import Contact, Conversation, Delivery, Inbox, Message
from helpdesk.tasks import message_deliver
from tests.factories import AssistantInboxFactory, InboxFactory
from tests.support.fake_provider import (
    FakeProvider,
    http_429,
    http_500,
    whatsapp_reengagement,
    whatsapp_token_expired,
)
from tests.support.on_commit import not_realtime
from tests.support.outbox import delivery_of
from tests.support.webhook_fixtures import fixture_body, outgoing_message, record_backoffs

pytestmark = pytest.mark.django_db

APP_SECRET = "d6f1c0ffee0ddba11c0ffee0ddba11c0"
ACCESS_TOKEN = "EAAGm0PX4ZCpsBAKZCZA0ZD"
PHONE_NUMBER_ID = "106540352242922"
VERIFY_TOKEN = "meatyhamhock"
SHEENA = "16505551234"


@pytest.fixture
def provider():
    with FakeProvider() as fake:
        yield fake


@pytest.fixture
def inbox(provider: FakeProvider) -> Inbox:
    return AssistantInboxFactory(
        inbox__channel_type=Inbox.ChannelType.WHATSAPP,
        inbox__secret=APP_SECRET,
        inbox__access_token=ACCESS_TOKEN,
        inbox__provider_config={
            "phone_number_id": PHONE_NUMBER_ID,
            "verify_token": VERIFY_TOKEN,
            "api_base_url": provider.base_url,
        },
    ).inbox


def url(inbox: Inbox) -> str:
    return f"/webhooks/whatsapp/{inbox.webhook_token}/"


def post(client, inbox: Inbox, body: bytes, signature: str | None = None):
    headers = {SIGNATURE_HEADER: sign(APP_SECRET, body) if signature is None else signature}
    if signature == "":
        headers = {}
    return client.post(url(inbox), data=body, content_type="application/json", headers=headers)


# ---- the GET handshake -------------------------------------------------------------------------------------


def test_handshake_answers_the_challenge_when_the_verify_token_matches(client, inbox):
    response = client.get(
        url(inbox), {"hub.mode": "subscribe", "hub.verify_token": VERIFY_TOKEN, "hub.challenge": "1158201444"}
    )
    assert response.status_code == 200
    assert response.content == b"1158201444"
    assert response["Content-Type"].startswith("text/plain")


@pytest.mark.parametrize(
    "params",
    [
        pytest.param(
            {"hub.mode": "subscribe", "hub.verify_token": "guess", "hub.challenge": "1"}, id="wrong-token"
        ),
        pytest.param({"hub.mode": "subscribe", "hub.challenge": "1"}, id="no-token"),
    ],
)
def test_handshake_with_a_wrong_verify_token_is_403_without_the_challenge(client, inbox, params):
    response = client.get(url(inbox), params)
    assert response.status_code == 403
    assert b'"1"' not in response.content and response.content != b"1"


def test_handshake_is_refused_when_no_verify_token_is_configured(client, inbox):
    inbox.provider_config = {}
    inbox.save()
    response = client.get(url(inbox), {"hub.mode": "subscribe", "hub.verify_token": "", "hub.challenge": "1"})
    assert response.status_code == 403


# ---- inbound shapes ----------------------------------------------------------------------------------------


def test_text_message_is_stored_and_given_to_the_ai(client, inbox, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        response = post(client, inbox, fixture_body("whatsapp", "text_message"))
    assert response.status_code == 200
    assert response.json()["status"] == "accepted"
    message = Message.objects.get()
    assert message.content == "Does it come in another color?"
    assert message.provider_message_id == "wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA="
    assert message.conversation.contact_inbox.source_id == SHEENA
    assert message.conversation.contact.name == "Sheena Nelson"
    assert len(not_realtime(callbacks)) == 1


def test_image_with_caption_keeps_the_media_id_and_the_caption_as_text(client, inbox):
    assert post(client, inbox, fixture_body("whatsapp", "image_with_caption")).status_code == 200
    message = Message.objects.get()
    assert message.content == "This is how it arrived"
    [attachment] = message.attachments
    assert attachment["type"] == "image"
    assert attachment["media_id"] == "1003383421387256"
    assert attachment["content_type"] == "image/jpeg"


def test_document_keeps_its_file_name(client, inbox):
    assert post(client, inbox, fixture_body("whatsapp", "document")).status_code == 200
    message = Message.objects.get()
    assert message.content == "My warranty card"
    assert message.attachments[0]["file_name"] == "warranty.pdf"


def test_voice_note_without_caption_gets_a_placeholder(client, inbox):
    assert post(client, inbox, fixture_body("whatsapp", "audio_voice")).status_code == 200
    message = Message.objects.get()
    assert message.content == "[audio]"
    assert message.attachments[0]["content_type"] == "audio/ogg; codecs=opus"


@pytest.mark.parametrize("shape", ["status_delivered", "reaction"])
def test_status_and_reaction_are_ignored_and_start_nothing(
    client, inbox, shape, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        response = post(client, inbox, fixture_body("whatsapp", shape))
    assert response.status_code == 200
    assert response.json()["status"] == "ignored"
    assert (Message.objects.count(), Conversation.objects.count(), Contact.objects.count()) == (0, 0, 0)
    assert not_realtime(callbacks) == []


def test_failed_status_marks_our_sent_reply_failed_and_tells_people(
    client, inbox, django_capture_on_commit_callbacks
):
    wamid = "wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBIyQjVFQjA4MjBFMTY0OUE2QzkA"
    reply = outgoing_message(inbox, source_id=SHEENA)
    Delivery.objects.filter(pk=reply.pk).update(status=Delivery.Status.SENT, provider_message_id=wamid)
    with django_capture_on_commit_callbacks() as callbacks:
        response = post(client, inbox, fixture_body("whatsapp", "status_failed_reengagement"))
    assert response.json()["status"] == "ignored"
    reply.refresh_from_db()
    assert delivery_of(reply).status == Delivery.Status.FAILED
    assert "131047" in delivery_of(reply).error
    assert reply.conversation.messages.filter(message_type=Message.Type.ACTIVITY).count() == 1
    assert not Message.objects.filter(message_type=Message.Type.INCOMING).exists()
    assert not_realtime(callbacks) == []


def test_message_for_another_phone_number_of_the_app_is_ignored(client, inbox):
    inbox.provider_config = {**inbox.provider_config, "phone_number_id": "999999999"}
    inbox.save()
    response = post(client, inbox, fixture_body("whatsapp", "text_message"))
    assert response.json()["status"] == "ignored"
    assert Message.objects.count() == 0


def test_redelivered_notification_is_a_200_no_op(client, inbox, django_capture_on_commit_callbacks):
    body = fixture_body("whatsapp", "text_message")
    post(client, inbox, body)
    with django_capture_on_commit_callbacks() as callbacks:
        response = post(client, inbox, body)
    assert response.json()["status"] == "duplicate"
    assert Message.objects.count() == 1
    assert not_realtime(callbacks) == []


# ---- the signature -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make_signature",
    [
        pytest.param(lambda body: "", id="missing"),
        pytest.param(lambda body: "sha256=" + "0" * 64, id="forged"),
        pytest.param(lambda body: sign(APP_SECRET, body)[:-2], id="truncated"),
        pytest.param(lambda body: sign("tenant-b-app-secret", body), id="other-tenants-secret"),
        pytest.param(lambda body: sign(APP_SECRET, body + b" "), id="signed-other-body"),
        pytest.param(lambda body: sign(APP_SECRET, body).removeprefix("sha256="), id="no-prefix"),
    ],
)
def test_bad_signature_is_401_and_stores_nothing(client, inbox, make_signature):
    InboxFactory(channel_type=Inbox.ChannelType.WHATSAPP, secret="tenant-b-app-secret")
    body = fixture_body("whatsapp", "text_message")
    response = post(client, inbox, body, signature=make_signature(body))
    assert response.status_code == 401
    assert Message.objects.count() == 0


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"{not json", id="not-json"),
        pytest.param(b"\xff\xfe", id="not-utf8"),
        pytest.param(b"[1, 2]", id="array"),
        pytest.param(
            json.dumps(
                {
                    "object": "whatsapp_business_account",
                    "entry": [
                        {"changes": [{"field": "messages", "value": {"messages": [{"type": "text"}]}}]}
                    ],
                }
            ).encode(),
            id="message-without-id",
        ),
    ],
)
def test_malformed_notification_is_400_never_500(client, inbox, body):
    response = post(client, inbox, body)
    assert response.status_code == 400
    assert Message.objects.count() == 0


# ---- sending -----------------------------------------------------------------------------------------------


def test_reply_is_sent_through_the_cloud_api_with_the_bearer_token(inbox, provider):
    message = outgoing_message(inbox, source_id=SHEENA)
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    [request] = provider.requests
    assert request["path"] == f"/{whatsapp.DEFAULT_API_VERSION}/{PHONE_NUMBER_ID}/messages"
    assert request["headers"]["Authorization"] == f"Bearer {ACCESS_TOKEN}"
    assert request["json"] == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": SHEENA,
        "type": "text",
        "text": {"preview_url": False, "body": "Your refund is on its way."},
    }
    assert delivery_of(message).provider_message_id == "wamid.FAKE00000001"


def test_long_reply_is_split_at_4096_characters():
    parts = whatsapp.fit_text("x" * 9000)
    assert [len(p) for p in parts] == [4096, 4096, 808]


def test_outside_the_24_hour_window_fails_for_good(inbox, provider):
    provider.script("/messages", whatsapp_reengagement())
    message = outgoing_message(inbox, source_id=SHEENA)
    assert message_deliver.apply(args=[message.id]).get() == "failed"
    message.refresh_from_db()
    assert delivery_of(message).status == Delivery.Status.FAILED
    assert "131047" in delivery_of(message).error and "24-hour" in delivery_of(message).error
    assert message.conversation.messages.filter(message_type=Message.Type.ACTIVITY).count() == 1
    assert len(provider.requests) == 1


def test_expired_access_token_fails_for_good(inbox, provider):
    provider.script("/messages", whatsapp_token_expired())
    message = outgoing_message(inbox, source_id=SHEENA)
    assert message_deliver.apply(args=[message.id]).get() == "failed"
    assert "code 190" in delivery_of(message).error


def test_429_is_retried_no_sooner_than_retry_after(inbox, provider, monkeypatch):
    provider.script("/messages", http_429(30))
    message = outgoing_message(inbox, source_id=SHEENA)
    backoffs = record_backoffs(monkeypatch)
    with pytest.raises(Retry):
        message_deliver(message.id)
    assert backoffs == [30.0]


def test_server_error_is_retried(inbox, provider):
    provider.script("/messages", http_500())
    message = outgoing_message(inbox, source_id=SHEENA)
    with pytest.raises(Retry):
        message_deliver(message.id)
    assert delivery_of(message).status == Delivery.Status.QUEUED
