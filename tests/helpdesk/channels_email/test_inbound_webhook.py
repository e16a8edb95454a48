"""Mailgun's inbound route into the e-mail inbox: signed mail stored once, replays and forgeries refused, automated
mail stored but never handed to the AI, malformed mail answered 400."""

from __future__ import annotations

import time

import pytest

from captain.answering.models import ReplyJob
from helpdesk.channels.email.channel import EmailChannel
from helpdesk.models import Conversation, Message
from tests.factories import AssistantInboxFactory
from tests.helpdesk.channels_email.support import email_inbox, post, signed_fields
from tests.helpdesk.channels_email.test_mime import fixture
from tests.support.row_state import database_state

pytestmark = pytest.mark.django_db


@pytest.fixture
def inbox():
    return AssistantInboxFactory(inbox=email_inbox()).inbox


def test_a_customers_mail_is_stored_with_its_subject_and_goes_to_the_ai(client, inbox):
    response = post(client, inbox, signed_fields(fixture("gmail_reply")))

    assert response.status_code == 200, response.content
    message = Message.objects.get()
    assert message.content == "Thanks! Can you send it to my office instead?"
    assert message.provider_message_id == "<CAF=k2pT3x7Q+gmail-1@mail.gmail.com>"
    assert message.conversation.subject == "Re: Where is my parcel?"
    assert message.conversation.contact_inbox.source_id == "ann.lee@gmail.com"
    assert message.conversation.contact.email == "ann.lee@gmail.com"
    assert ReplyJob.objects.filter(message=message).count() == 1


def test_the_customers_next_mail_in_the_thread_lands_in_the_same_conversation(client, inbox):
    post(client, inbox, signed_fields(fixture("gmail_reply")))
    later = (
        fixture("gmail_reply")
        .replace(b"gmail-1@", b"gmail-2@")
        .replace(
            b"In-Reply-To: <helpdesk-reply-10@",
            b"In-Reply-To: <CAF=k2pT3x7Q+gmail-1@mail.gmail.com>\r\nX-Old: <",
        )
    )
    post(client, inbox, signed_fields(later))
    assert Conversation.objects.count() == 1
    assert Message.objects.count() == 2


def test_a_mail_that_answers_nothing_we_know_starts_its_own_conversation(client, inbox):
    post(client, inbox, signed_fields(fixture("gmail_reply")))
    post(client, inbox, signed_fields(fixture("gmail_reply").replace(b"gmail-1@", b"gmail-2@")))
    assert Conversation.objects.count() == 2


@pytest.mark.parametrize("name", ["auto_reply", "bounce"])
def test_automated_mail_is_kept_for_people_and_never_answered_by_the_ai(client, inbox, name):
    response = post(client, inbox, signed_fields(fixture(name)))

    assert response.status_code == 200, response.content
    message = Message.objects.get()
    assert ReplyJob.objects.count() == 0
    assert message.conversation.status == Conversation.Status.OPEN  # people see it; the AI does not


def test_the_same_delivery_replayed_is_stored_once(client, inbox):
    fields = signed_fields(fixture("apple_mail"))
    assert post(client, inbox, fields).json()["status"] == "accepted"
    replay = post(client, inbox, fields)
    assert (replay.status_code, replay.json()["status"]) == (200, "duplicate")
    assert Message.objects.count() == 1
    assert ReplyJob.objects.count() == 1


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        (lambda: signed_fields(fixture("apple_mail"), key="wrong-key"), "signature_invalid"),
        (lambda: signed_fields(fixture("apple_mail"), at=time.time() - 3600), "timestamp_expired"),
        (lambda: {**signed_fields(fixture("apple_mail")), "signature": b""}, "signature_missing"),
        (lambda: {**signed_fields(fixture("apple_mail")), "timestamp": b"yesterday"}, "timestamp_invalid"),
    ],
)
def test_a_forged_or_stale_delivery_is_refused_and_changes_nothing(client, inbox, fields, code):
    before = database_state()
    response = post(client, inbox, fields())
    assert response.status_code == 401
    assert response.json()["error"] == code
    assert database_state() == before


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"Subject: nobody\r\n\r\nhi", "invalid_sender"),
        (b"", "invalid_payload"),
        (b"\x00\xff", "invalid_sender"),
    ],
)
def test_malformed_mail_is_answered_400_and_nothing_stored(client, inbox, raw, code):
    response = post(client, inbox, signed_fields(raw))
    assert response.status_code == 400
    assert response.json()["error"] == code
    assert Message.objects.count() == 0


def test_a_body_that_is_no_form_is_refused(client, inbox):
    response = client.post(
        f"/webhooks/email/{inbox.webhook_token}/", data=b"{}", content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_form"


def test_a_mail_with_a_huge_attachment_is_refused_with_400_not_a_server_error(
    client, inbox, monkeypatch, settings
):
    # The e-mail channel's own request limit (26 MB, what Mailgun can deliver), made small here.
    monkeypatch.setattr(EmailChannel, "request_limit", 64 * 1024)
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 64 * 1024
    huge = fixture("forwarded").replace(b"JVBERi0xLjQKJcfsj6IKCg==", b"QUFB" * 40_000)
    response = post(client, inbox, signed_fields(huge))
    assert response.status_code == 400
    assert response.json()["error"] == "too_large"
    assert Message.objects.count() == 0


def test_eight_bit_headers_are_stored_readable(client, inbox):
    raw = (
        "From: Zoë Müller <zoe@example.com>\r\nSubject: Größe falsch\r\nMessage-ID: <8bit-1@example.com>\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n\r\nDie Größe passt nicht."
    ).encode()
    assert post(client, inbox, signed_fields(raw)).status_code == 200
    message = Message.objects.get()
    assert message.conversation.subject == "Größe falsch"
    assert message.conversation.contact.name == "Zoë Müller"
