"""The generic signed API channel webhook: every bad input gets a clear 4xx and stores nothing."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from captain.answering.models import ReplyJob
from helpdesk.channels.api_channel import SIGNATURE_HEADER, TIMESTAMP_HEADER, sign, signed_headers
from helpdesk.models import Conversation, Delivery, Message
from tests.factories import AssistantInboxFactory, InboxFactory
from tests.support.on_commit import not_realtime
from tests.support.outbox import delivery_of

pytestmark = pytest.mark.django_db


def payload(message_id: str = "m-1", text: str = "Where is my order?", contact_id: str = "c-1") -> bytes:
    return json.dumps(
        {
            "message_id": message_id,
            "contact": {"id": contact_id, "name": "Ann", "email": "ann@example.com"},
            "text": text,
        }
    ).encode()


def post(client, inbox, body: bytes, headers: dict[str, str] | None = None):
    headers = signed_headers(inbox.secret, body) if headers is None else headers
    return client.post(
        f"/webhooks/api/{inbox.webhook_token}/",
        data=body,
        content_type="application/json",
        headers=headers,
    )


@pytest.fixture
def inbox():
    return AssistantInboxFactory().inbox


def test_valid_signed_message_is_stored_and_acknowledged(client, inbox, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        response = post(client, inbox, payload())
    assert response.status_code == 200
    assert response.json()["status"] == "accepted"
    message = Message.objects.get()
    assert message.content == "Where is my order?"
    assert message.provider_message_id == "m-1"
    assert ReplyJob.objects.get(pk=message.pk).status == ReplyJob.Status.PENDING
    assert message.conversation.status == Conversation.Status.PENDING
    assert message.conversation.contact.name == "Ann"
    assert len(not_realtime(callbacks)) == 1  # exactly one AI run enqueued, after commit


def test_duplicate_delivery_answers_200_and_creates_nothing(
    client, inbox, django_capture_on_commit_callbacks
):
    post(client, inbox, payload())
    with django_capture_on_commit_callbacks() as callbacks:
        response = post(client, inbox, payload())
    assert response.status_code == 200
    assert response.json()["status"] == "duplicate"
    assert Message.objects.count() == 1
    assert Conversation.objects.count() == 1
    assert not_realtime(callbacks) == []


def test_inbox_without_assistant_opens_conversation_for_people(client, django_capture_on_commit_callbacks):
    inbox = InboxFactory()
    with django_capture_on_commit_callbacks() as callbacks:
        assert post(client, inbox, payload()).status_code == 200
    conversation = Conversation.objects.get()
    assert conversation.status == Conversation.Status.OPEN
    assert not ReplyJob.objects.filter(pk=Message.objects.get().pk).exists()
    assert not_realtime(callbacks) == []


def test_second_message_of_contact_joins_the_open_conversation(client, inbox):
    post(client, inbox, payload("m-1"))
    post(client, inbox, payload("m-2", text="Hello?"))
    assert Conversation.objects.count() == 1
    assert Message.objects.count() == 2


@pytest.mark.parametrize(
    "make_headers",
    [
        pytest.param(lambda inbox, body: {}, id="missing"),
        pytest.param(lambda inbox, body: signed_headers("other-secret", body), id="wrong-secret"),
        pytest.param(
            lambda inbox, body: signed_headers(inbox.secret, body, now=time.time() - 310), id="replayed-old"
        ),
        pytest.param(
            lambda inbox, body: signed_headers(inbox.secret, body, now=time.time() + 310),
            id="from-the-future",
        ),
        pytest.param(
            lambda inbox, body: {
                **signed_headers(inbox.secret, body),
                SIGNATURE_HEADER: "sha256=" + "0" * 64,
            },
            id="forged",
        ),
        pytest.param(
            lambda inbox, body: {
                **signed_headers(inbox.secret, body),
                SIGNATURE_HEADER: sign(inbox.secret, "1", body)[:-2],
            },
            id="truncated",
        ),
        pytest.param(
            lambda inbox, body: {TIMESTAMP_HEADER: "soon", SIGNATURE_HEADER: "sha256=abc"}, id="bad-timestamp"
        ),
        pytest.param(lambda inbox, body: signed_headers(inbox.secret, body + b" "), id="signed-other-body"),
    ],
)
def test_bad_signature_is_401_and_stores_nothing(client, inbox, make_headers):
    body = payload()
    response = post(client, inbox, body, make_headers(inbox, body))
    assert response.status_code == 401
    assert response.json()["error"].startswith(("signature", "timestamp"))
    assert Message.objects.count() == 0
    assert Conversation.objects.count() == 0


def test_other_tenants_secret_is_rejected(client, inbox):
    other = InboxFactory(secret="tenant-b-secret")
    body = payload()
    response = post(client, inbox, body, signed_headers(other.secret, body))
    assert response.status_code == 401
    assert Message.objects.count() == 0


def test_unknown_inbox_is_404(client):
    response = client.post("/webhooks/api/nope/", data=payload(), content_type="application/json")
    assert response.status_code == 404


def test_get_is_not_allowed(client, inbox):
    assert client.get(f"/webhooks/api/{inbox.webhook_token}/").status_code == 405


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"{not json", id="not-json"),
        pytest.param(b"\xff\xfe\x00garbage", id="not-utf8"),
        pytest.param(b"[]", id="array"),
        pytest.param(b'"text"', id="string"),
        pytest.param(json.dumps({"message_id": "m"}).encode(), id="missing-fields"),
        pytest.param(
            json.dumps({"message_id": "m", "contact": {"id": "c"}, "text": ""}).encode(), id="empty-text"
        ),
        pytest.param(json.dumps({"message_id": 1, "contact": "c", "text": 5}).encode(), id="wrong-types"),
        pytest.param(
            json.dumps({"message_id": "m", "contact": {"id": "c", "email": "nope"}, "text": "x"}).encode(),
            id="bad-email",
        ),
        pytest.param(b"[" * 100_000 + b"]" * 100_000, id="deeply-nested-recursion"),
        pytest.param(
            json.dumps({"a": [[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]}).encode(), id="too-deep"
        ),
        pytest.param(
            json.dumps({"message_id": "m", "contact": {"id": "c"}, "text": "x" * 10_001}).encode(),
            id="text-too-long",
        ),
    ],
)
def test_malformed_signed_body_is_400_never_500(client, inbox, body):
    response = post(client, inbox, body)
    assert response.status_code == 400, response.content
    assert "error" in response.json()
    assert Message.objects.count() == 0


def test_oversized_body_is_refused_before_parsing(client, inbox, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    body = payload(text="x" * 2000)
    response = post(client, inbox, body)
    assert response.status_code == 400
    assert response.json()["error"] == "too_large"
    assert Message.objects.count() == 0


@hsettings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    mutation=st.one_of(
        st.binary(min_size=0, max_size=80),
        st.text(max_size=80).map(lambda t: t.encode("utf-8", "surrogatepass") if t.isprintable() else b"x"),
    ),
    target=st.sampled_from(["signature", "timestamp", "body"]),
)
def test_mutated_requests_never_store_or_500(client, inbox, mutation, target):
    body = payload(message_id="fuzz")
    headers = signed_headers(inbox.secret, body)
    if target == "signature":
        headers[SIGNATURE_HEADER] = "sha256=" + mutation.hex()[:64]
    elif target == "timestamp":
        headers[TIMESTAMP_HEADER] = mutation.decode("latin-1")[:20]
    else:
        body = body + mutation if mutation else body + b" "
    try:
        response = post(client, inbox, body, headers)
    except ValueError:
        return  # the test client itself refuses header values with control characters; no request was made
    assert response.status_code in (400, 401)
    assert not Message.objects.filter(provider_message_id="fuzz").exists()


def test_greeting_is_sent_once_when_a_conversation_starts(client, inbox, django_capture_on_commit_callbacks):
    inbox.greeting_message = "Hi! We usually answer within minutes."
    inbox.save()
    with django_capture_on_commit_callbacks() as callbacks:
        post(client, inbox, payload("m-1"))
    post(client, inbox, payload("m-2", text="anyone?"))
    greetings = Message.objects.filter(
        message_type=Message.Type.OUTGOING, sender_type=Message.SenderType.SYSTEM
    )
    assert [g.content for g in greetings] == ["Hi! We usually answer within minutes."]
    assert delivery_of(greetings[0]).status == Delivery.Status.QUEUED
    assert len(not_realtime(callbacks)) == 2  # the greeting's delivery and the AI run


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b'{"message_id": "m-nan", "contact": {"id": "c"}, "text": "x", "n": NaN}', id="NaN"),
        pytest.param(
            b'{"message_id": "m-inf", "contact": {"id": "c"}, "text": "x", "n": -Infinity}', id="Infinity"
        ),
    ],
)
def test_non_standard_json_numbers_are_refused(client, inbox, body):
    response = post(client, inbox, body)

    assert response.status_code == 400
    assert not Message.objects.exists()


@pytest.mark.parametrize(
    ("raw_text", "stored"),
    [
        pytest.param('"lone \\ud800 surrogate"', "lone \ufffd surrogate", id="lone-surrogate"),
        pytest.param('"nul \\u0000 char"', "nul  char", id="nul"),
    ],
)
def test_text_a_database_cannot_store_is_cleaned_not_500(client, inbox, raw_text, stored):
    body = (
        '{"message_id": "m-odd", "contact": {"id": "c\\ud800", "name": "A\\u0000nn"}, "text": '
        + raw_text
        + "}"
    ).encode()

    response = post(client, inbox, body)

    assert response.status_code == 200
    message = Message.objects.get(provider_message_id="m-odd")
    assert message.content == stored
    assert message.sender_contact.name == "Ann"
