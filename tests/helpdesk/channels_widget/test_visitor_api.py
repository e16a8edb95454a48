"""The widget's public visitor API (helpdesk.api.widget) through Django: origins, visitor tokens, messages,
setUser's identity check, rate limit, and every bad request answered 4xx with nothing stored."""

from __future__ import annotations

import pytest

from helpdesk.channels.registry import channel_for
from helpdesk.channels.widget import identifier_hash, visitor_token
from helpdesk.models import Contact, ContactInbox, Conversation, Message
from helpdesk.services.messages import message_create_note
from tests.factories import AssistantInboxFactory
from tests.helpdesk.channels_widget.support import PAGE, SECRET, call, new_visitor, send, widget_inbox

pytestmark = pytest.mark.django_db


@pytest.fixture
def inbox():
    return widget_inbox()


def test_a_visitor_gets_a_token_and_keeps_it_when_they_come_back(client, inbox):
    response = call(client, "POST", inbox, "session")
    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == PAGE
    token = response.json()["visitor_token"]

    again = call(client, "POST", inbox, "session", token=token)
    assert again.json()["visitor_token"] == token
    assert "Set-Cookie" not in again  # no session of the dashboard, ever


def test_a_token_of_another_widget_starts_a_new_visitor(client, inbox):
    other = widget_inbox()
    foreign = new_visitor(client, other)
    assert call(client, "POST", inbox, "session", token=foreign).json()["visitor_token"] != foreign
    assert (
        call(client, "POST", inbox, "messages", token=foreign, body={"id": "a", "text": "hi"}).status_code
        == 401
    )


def test_a_message_is_stored_in_the_visitors_conversation_and_read_back(client, inbox):
    token = new_visitor(client, inbox)

    response = send(client, inbox, token, "Where is my parcel?")

    assert response.status_code == 201, response.content
    message = Message.objects.get()
    assert message.content == "Where is my parcel?"
    assert message.message_type == Message.Type.INCOMING
    assert response.json()["conversation_id"] == message.conversation_id
    thread = call(client, "GET", inbox, "messages", token=token).json()["messages"]
    assert [(m["text"], m["incoming"]) for m in thread] == [("Where is my parcel?", True)]


def test_the_same_message_sent_twice_is_stored_once(client, inbox):
    token = new_visitor(client, inbox)
    assert send(client, inbox, token, "Hello", "same").status_code == 201
    retry = send(client, inbox, token, "Hello", "same")
    assert retry.status_code == 200
    assert retry.json()["status"] == "duplicate"
    assert Message.objects.count() == 1


def test_a_returning_visitor_continues_the_same_conversation(client, inbox):
    token = new_visitor(client, inbox)
    send(client, inbox, token, "first", "1")
    token_after_reload = call(client, "POST", inbox, "session", token=token).json()["visitor_token"]
    send(client, inbox, token_after_reload, "second", "2")
    assert Conversation.objects.count() == 1
    assert [m["text"] for m in call(client, "GET", inbox, "messages", token=token).json()["messages"]] == [
        "first",
        "second",
    ]


def test_a_visitor_never_reads_another_visitors_thread_or_private_notes(client, inbox):
    alice, bob = new_visitor(client, inbox), new_visitor(client, inbox)
    send(client, inbox, alice, "alice's question", "a")
    send(client, inbox, bob, "bob's question", "b")
    message_create_note(
        conversation=Conversation.objects.get(messages__content="alice's question"), content="VIP"
    )

    thread = call(client, "GET", inbox, "messages", token=alice).json()["messages"]

    assert [m["text"] for m in thread] == ["alice's question"]


def test_messages_after_an_id_are_only_the_new_ones(client, inbox):
    token = new_visitor(client, inbox)
    send(client, inbox, token, "one", "1")
    first = Message.objects.get().id
    send(client, inbox, token, "two", "2")
    thread = call(client, "GET", inbox, "messages", token=token, query=f"after={first}").json()["messages"]
    assert [m["text"] for m in thread] == ["two"]
    assert call(client, "GET", inbox, "messages", token=token, query="after=x").status_code == 400


@pytest.mark.parametrize("origin", ["http://evil.example", "http://127.0.0.1:8124", "null", ""])
def test_a_page_on_another_origin_is_refused_and_nothing_is_stored(client, inbox, origin):
    token = visitor_token(inbox_id=inbox.pk, source_id="visitor:abc")
    for method, operation in [
        ("POST", "session"),
        ("POST", "messages"),
        ("GET", "messages"),
        ("OPTIONS", "messages"),
    ]:
        response = call(
            client, method, inbox, operation, token=token, origin=origin, body={"id": "x", "text": "hi"}
        )
        assert response.status_code == 403, (method, operation)
        assert response.json()["error"] == (
            "origin_not_allowed" if origin.startswith("http") else "origin_required"
        )
        assert "Access-Control-Allow-Origin" not in response
    assert Message.objects.count() == 0
    assert ContactInbox.objects.count() == 0


def test_the_preflight_of_an_allowed_origin_names_the_visitor_header(client, inbox):
    response = call(client, "OPTIONS", inbox, "messages", origin="https://shop.example")
    assert response.status_code == 204
    assert response["Access-Control-Allow-Origin"] == "https://shop.example"
    assert "X-Visitor-Token" in response["Access-Control-Allow-Headers"]
    assert "Access-Control-Allow-Credentials" not in response


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", "invalid_json"),
        (b"[1, 2]", "invalid_payload"),
        ({"id": "x"}, "invalid_payload"),
        ({"id": "has spaces", "text": "hi"}, "invalid_payload"),
        ({"id": "x", "text": "y" * 5001}, "invalid_payload"),
        (b"\xff\xfe", "invalid_encoding"),
    ],
)
def test_a_malformed_message_is_refused_with_400(client, inbox, body, code):
    token = new_visitor(client, inbox)
    response = call(client, "POST", inbox, "messages", token=token, body=body)
    assert response.status_code == 400
    assert response.json()["error"] == code
    assert Message.objects.count() == 0


def test_a_forged_or_missing_visitor_token_is_refused(client, inbox):
    assert send(client, inbox, "", "hi").json()["error"] == "visitor_token_missing"
    forged = send(client, inbox, "eyJpIjoxLCJzIjoidXNlcjphZG1pbiJ9:forged", "hi")
    assert forged.status_code == 401
    assert forged.json()["error"] == "visitor_token_invalid"
    assert Message.objects.count() == 0


def test_an_unknown_widget_and_a_wrong_method_are_refused(client, inbox):
    response = client.post("/widget/nope/session/", headers={"Origin": PAGE})
    assert response.status_code == 404
    assert call(client, "GET", inbox, "session").status_code == 405


def test_set_user_with_a_valid_hash_names_the_visitor_and_keeps_their_conversation(client, inbox):
    token = new_visitor(client, inbox)
    send(client, inbox, token, "before identifying", "1")
    body = {
        "identifier": "cust-42",
        "identifier_hash": identifier_hash(SECRET, "cust-42"),
        "name": "Ann",
        "email": "ann@example.com",
    }

    response = call(client, "POST", inbox, "identify", token=token, body=body)

    assert response.status_code == 200, response.content
    identified = response.json()["visitor_token"]
    row = ContactInbox.objects.get()
    assert row.source_id == "user:cust-42"
    assert (row.contact.name, row.contact.email) == ("Ann", "ann@example.com")
    assert [
        m["text"] for m in call(client, "GET", inbox, "messages", token=identified).json()["messages"]
    ] == ["before identifying"]


def test_set_user_on_another_device_merges_into_the_known_contact(client, inbox):
    proof = {"identifier": "cust-7", "identifier_hash": identifier_hash(SECRET, "cust-7")}
    laptop = new_visitor(client, inbox)
    send(client, inbox, laptop, "from the laptop", "1")
    laptop = call(client, "POST", inbox, "identify", token=laptop, body=proof).json()["visitor_token"]
    phone = new_visitor(client, inbox)
    send(client, inbox, phone, "from the phone", "2")

    phone = call(client, "POST", inbox, "identify", token=phone, body=proof).json()["visitor_token"]

    assert phone == laptop
    texts = [m["text"] for m in call(client, "GET", inbox, "messages", token=phone).json()["messages"]]
    assert texts == ["from the laptop", "from the phone"]
    known = ContactInbox.objects.get(source_id="user:cust-7").contact
    assert set(Conversation.objects.values_list("contact_id", flat=True)) == {known.id}


@pytest.mark.parametrize("forged", ["", "0" * 64, identifier_hash("another-secret", "cust-42"), "é" * 10])
def test_set_user_with_a_forged_hash_is_refused_and_changes_nothing(client, inbox, forged):
    token = new_visitor(client, inbox)
    send(client, inbox, token, "anonymous", "1")
    before = list(ContactInbox.objects.values_list("source_id", "contact_id"))

    response = call(
        client,
        "POST",
        inbox,
        "identify",
        token=token,
        body={"identifier": "cust-42", "identifier_hash": forged, "name": "Mallory"},
    )

    assert response.status_code == 403
    assert response.json()["error"] == "identifier_hash_invalid"
    assert list(ContactInbox.objects.values_list("source_id", "contact_id")) == before
    assert not Contact.objects.filter(name="Mallory").exists()


def test_set_user_refuses_bad_fields(client, inbox):
    token = new_visitor(client, inbox)
    for body in (
        {"identifier": "", "identifier_hash": ""},
        {"identifier": ["x"]},
        {"identifier": "x" * 201, "identifier_hash": "a"},
    ):
        response = call(client, "POST", inbox, "identify", token=token, body=body)
        assert response.status_code == 400, body


def test_writes_over_the_inbox_rate_limit_are_answered_429(client, redis_url):
    inbox = widget_inbox(webhook_rate_limit_per_minute=2)
    token = new_visitor(client, inbox)  # 1
    assert send(client, inbox, token, "one", "1").status_code == 201  # 2

    refused = send(client, inbox, token, "two", "2")

    assert refused.status_code == 429
    assert int(refused["Retry-After"]) >= 0
    assert refused["Access-Control-Allow-Origin"] == PAGE  # the page can read why
    assert Message.objects.count() == 1


def test_the_channel_confirms_a_reply_without_any_request(inbox):
    result = channel_for(inbox).send(Message(inbox=inbox), timeout=1.0, parts=None)  # type: ignore[arg-type]
    assert result.ok
    assert not result.permanent


def test_the_event_stream_refuses_other_origins_and_bad_tokens(client, inbox):
    token = new_visitor(client, inbox)
    events = f"/widget/{inbox.webhook_token}/events/"
    assert (
        client.get(f"{events}?visitor_token={token}", headers={"Origin": "http://evil.example"}).status_code
        == 403
    )
    assert client.get(f"{events}?visitor_token=forged", headers={"Origin": PAGE}).status_code == 401
    # The test client is no ASGI server: a stream is answered "do not reconnect" (204), for an allowed page.
    allowed = client.get(f"{events}?visitor_token={token}", headers={"Origin": PAGE})
    assert allowed.status_code == 204
    assert allowed["Access-Control-Allow-Origin"] == PAGE


def test_the_page_is_told_when_the_ai_took_the_message(client, inbox):
    token = new_visitor(client, inbox)
    assert send(client, inbox, token, "no assistant yet", "1").json()["ai_answering"] is False

    served = widget_inbox()
    AssistantInboxFactory(inbox=served, assistant__account=served.account)
    visitor = new_visitor(client, served)
    assert send(client, served, visitor, "hello", "1").json()["ai_answering"] is True
    assert send(client, served, visitor, "hello", "1").json()["ai_answering"] is False  # a retry: nothing new
