"""Slack Events API: url_verification after the signature check, one test per event shape through the real
view, the v0 signature with its 300 s window, and chat.postMessage against a fake Slack on 127.0.0.1."""

from __future__ import annotations

import json
import time

import pytest
from celery.exceptions import Retry

from helpdesk.channels import slack
from helpdesk.channels.slack import SIGNATURE_HEADER, TIMESTAMP_HEADER, sign, signed_headers
from helpdesk.models import Contact, Conversation, Delivery, Inbox, Message
from helpdesk.tasks import message_deliver
from tests.factories import AssistantInboxFactory, InboxFactory
from tests.support.fake_provider import FakeProvider, http_429, slack_error
from tests.support.on_commit import not_realtime
from tests.support.outbox import delivery_of
from tests.support.webhook_fixtures import fixture_body, fixture_json, outgoing_message, record_backoffs

pytestmark = pytest.mark.django_db

SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
BOT_TOKEN = "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy"
BOT_USER_ID = "U0LAN0Z89"
DM_CONTACT = "D0LAN2Q65:U061F7AUR"


@pytest.fixture
def provider():
    with FakeProvider() as fake:
        yield fake


@pytest.fixture
def inbox(provider: FakeProvider) -> Inbox:
    return AssistantInboxFactory(
        inbox__channel_type=Inbox.ChannelType.SLACK,
        inbox__secret=SIGNING_SECRET,
        inbox__access_token=BOT_TOKEN,
        inbox__provider_config={"bot_user_id": BOT_USER_ID, "api_base_url": provider.base_url},
    ).inbox


def post(client, inbox: Inbox, body: bytes, headers: dict[str, str] | None = None):
    headers = signed_headers(SIGNING_SECRET, body) if headers is None else headers
    return client.post(
        f"/webhooks/slack/{inbox.webhook_token}/", data=body, content_type="application/json", headers=headers
    )


# ---- url_verification --------------------------------------------------------------------------------------


def test_url_verification_is_answered_with_the_challenge(client, inbox):
    response = post(client, inbox, fixture_body("slack", "url_verification"))
    assert response.status_code == 200
    assert response.json() == {"challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}


def test_unsigned_url_verification_gets_no_challenge(client, inbox):
    response = post(client, inbox, fixture_body("slack", "url_verification"), headers={})
    assert response.status_code == 401
    assert b"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" not in response.content


# ---- inbound shapes ----------------------------------------------------------------------------------------


def test_direct_message_is_stored_and_given_to_the_ai(client, inbox, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        response = post(client, inbox, fixture_body("slack", "message"))
    assert response.status_code == 200
    assert response.json()["status"] == "accepted"
    message = Message.objects.get()
    assert message.content == "Hi, our invoices page shows an error since this morning"
    assert message.provider_message_id == "Ev0LAN670R"
    assert message.conversation.contact_inbox.source_id == DM_CONTACT
    assert len(not_realtime(callbacks)) == 1


def test_message_in_a_thread_remembers_the_thread(client, inbox):
    assert post(client, inbox, fixture_body("slack", "message_in_thread")).status_code == 200
    source_id = Message.objects.get().conversation.contact_inbox.source_id
    assert source_id == "C0LAN2Q65:U061F7AUR:1718000000.000200"


def test_file_share_keeps_the_text_and_links_the_file(client, inbox):
    assert post(client, inbox, fixture_body("slack", "file_share")).status_code == 200
    message = Message.objects.get()
    permalink = "https://acme.slack.com/files/U061F7AUR/F0LAN7T2A/error.png"
    assert message.content == f"Screenshot of the error\n{permalink}"
    [attachment] = message.attachments
    assert attachment == {
        "type": "file",
        "file_id": "F0LAN7T2A",
        "url": permalink,
        "file_name": "error.png",
        "content_type": "image/png",
        "file_size": 58211,
    }


@pytest.mark.parametrize(
    "shape", ["message_changed", "bot_message", "own_bot_reply", "channel_join", "app_mention"]
)
def test_edits_bots_joins_and_mentions_are_ignored_and_start_nothing(
    client, inbox, shape, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        response = post(client, inbox, fixture_body("slack", shape))
    assert response.status_code == 200
    assert response.json()["status"] == "ignored"
    assert (Message.objects.count(), Conversation.objects.count(), Contact.objects.count()) == (0, 0, 0)
    assert not_realtime(callbacks) == []


def test_our_own_bot_user_is_ignored_even_without_a_bot_id(client, inbox):
    event = fixture_json("slack", "own_bot_reply")
    del event["event"]["bot_id"], event["event"]["bot_profile"]
    response = post(client, inbox, json.dumps(event).encode())
    assert response.json()["status"] == "ignored"
    assert Message.objects.count() == 0


def test_slack_retry_of_the_same_event_is_a_200_no_op(client, inbox, django_capture_on_commit_callbacks):
    body = fixture_body("slack", "message")
    post(client, inbox, body)
    with django_capture_on_commit_callbacks() as callbacks:
        response = post(
            client, inbox, body, {**signed_headers(SIGNING_SECRET, body), "X-Slack-Retry-Num": "1"}
        )
    assert response.json()["status"] == "duplicate"
    assert Message.objects.count() == 1
    assert not_realtime(callbacks) == []


# ---- the signature -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make_headers",
    [
        pytest.param(lambda body: {}, id="missing"),
        pytest.param(
            lambda body: {**signed_headers(SIGNING_SECRET, body), SIGNATURE_HEADER: "v0=" + "0" * 64},
            id="forged",
        ),
        # 310 s, not 301: the header carries whole seconds, so a 301 s skew truncates to 300 and sits on the edge.
        pytest.param(lambda body: signed_headers(SIGNING_SECRET, body, now=time.time() - 310), id="replayed"),
        pytest.param(lambda body: signed_headers(SIGNING_SECRET, body, now=time.time() + 310), id="future"),
        pytest.param(lambda body: signed_headers("tenant-b-signing-secret", body), id="other-tenants-secret"),
        pytest.param(lambda body: signed_headers(SIGNING_SECRET, body + b"\n"), id="signed-other-body"),
        pytest.param(
            lambda body: {TIMESTAMP_HEADER: "1", SIGNATURE_HEADER: sign(SIGNING_SECRET, "1", body)[:-4]},
            id="truncated-and-old",
        ),
        pytest.param(lambda body: {TIMESTAMP_HEADER: "soon", SIGNATURE_HEADER: "v0=abc"}, id="bad-timestamp"),
    ],
)
def test_bad_signature_is_401_and_stores_nothing(client, inbox, make_headers):
    InboxFactory(channel_type=Inbox.ChannelType.SLACK, secret="tenant-b-signing-secret")
    body = fixture_body("slack", "message")
    response = post(client, inbox, body, make_headers(body))
    assert response.status_code == 401
    assert response.json()["error"].startswith(("signature", "timestamp"))
    assert Message.objects.count() == 0


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"{not json", id="not-json"),
        pytest.param(b'"event"', id="string"),
        pytest.param(b'{"type": "event_callback", "event": {"type": "message"}}', id="no-event-id"),
        pytest.param(b'{"type": "url_verification"}', id="no-challenge"),
        pytest.param(
            b'{"type": "event_callback", "event_id": "Ev1", "event": {"type": "message", "user": "U1", "text": "x"}}',
            id="no-channel",
        ),
    ],
)
def test_malformed_event_is_400_never_500(client, inbox, body):
    response = post(client, inbox, body)
    assert response.status_code == 400
    assert Message.objects.count() == 0


# ---- sending -----------------------------------------------------------------------------------------------


def test_reply_is_posted_with_the_bot_token(inbox, provider):
    message = outgoing_message(inbox, source_id=DM_CONTACT)
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    [request] = provider.requests
    assert request["path"] == "/api/chat.postMessage"
    assert request["headers"]["Authorization"] == f"Bearer {BOT_TOKEN}"
    assert request["json"] == {"channel": "D0LAN2Q65", "text": "Your refund is on its way."}
    assert delivery_of(message).provider_message_id == "1700000000.000001"


def test_reply_to_a_thread_goes_to_that_thread(inbox, provider):
    message = outgoing_message(inbox, source_id="C0LAN2Q65:U061F7AUR:1718000000.000200")
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    assert provider.requests[0]["json"]["thread_ts"] == "1718000000.000200"
    assert provider.requests[0]["json"]["channel"] == "C0LAN2Q65"


def test_reply_over_40000_characters_is_shortened_not_split(inbox, provider):
    message = outgoing_message(inbox, source_id=DM_CONTACT, content="y" * 45_000)
    assert message_deliver.apply(args=[message.id]).get() == "sent"
    [text] = provider.texts()
    assert len(text) == slack.TEXT_LIMIT
    assert text.endswith("…")


@pytest.mark.parametrize("error", ["channel_not_found", "invalid_auth", "not_in_channel"])
def test_ok_false_with_a_permanent_error_fails_for_good(inbox, provider, error):
    provider.script("/chat.postMessage", slack_error(error))
    message = outgoing_message(inbox, source_id=DM_CONTACT)
    assert message_deliver.apply(args=[message.id]).get() == "failed"
    message.refresh_from_db()
    assert delivery_of(message).status == Delivery.Status.FAILED
    assert error in delivery_of(message).error
    assert message.conversation.messages.filter(message_type=Message.Type.ACTIVITY).count() == 1


def test_ok_false_ratelimited_is_retried(inbox, provider):
    provider.script("/chat.postMessage", slack_error("ratelimited"))
    message = outgoing_message(inbox, source_id=DM_CONTACT)
    with pytest.raises(Retry):
        message_deliver(message.id)
    assert delivery_of(message).status == Delivery.Status.QUEUED


def test_http_429_is_retried_no_sooner_than_retry_after(inbox, provider, monkeypatch):
    provider.script("/chat.postMessage", http_429(12))
    message = outgoing_message(inbox, source_id=DM_CONTACT)
    backoffs = record_backoffs(monkeypatch)
    with pytest.raises(Retry):
        message_deliver(message.id)
    assert backoffs == [12.0]
