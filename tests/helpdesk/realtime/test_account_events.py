"""The account's event stream on the real ASGI server (gunicorn + uvicorn worker) and a real redis-server: a
signed-in member gets the account's events and the events addressed to them, never another account's events nor
another person's; a non-member gets no stream; many streams of one process share ONE Redis subscription; real
writes (a new conversation, a note, an assignment done with `.update()`) publish ids and no message text."""

from __future__ import annotations

import json
import queue
import threading
import time
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
import redis
from django.test import Client

from helpdesk.models import Membership
from helpdesk.realtime.publish import publish_now
from helpdesk.services.conversations import conversation_assign
from helpdesk.services.messages import message_create_note
from tests.factories import AccountFactory, ConversationFactory, InboxFactory, MembershipFactory, UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SENTINEL = "test-sentinel"


@pytest.fixture
def people(db):
    acme, globex = AccountFactory(name="Acme"), AccountFactory(name="Globex")
    alice, bob, mallory = (
        UserFactory(username="alice"),
        UserFactory(username="bob"),
        UserFactory(username="mal"),
    )
    MembershipFactory(account=acme, user=alice, role=Membership.Role.AGENT)
    MembershipFactory(account=acme, user=bob, role=Membership.Role.AGENT)
    MembershipFactory(account=globex, user=mallory, role=Membership.Role.ADMIN)
    return {"acme": acme, "globex": globex, "alice": alice, "bob": bob, "mallory": mallory}


def session_cookie(user) -> dict[str, str]:
    client = Client()
    client.force_login(user)  # a session row in the test database, which the server reads
    return {"sessionid": client.cookies["sessionid"].value}


def events_url(web, account) -> str:
    return f"{web.url}/app/accounts/{account.id}/events/"


@contextmanager
def stream(web, account, user):
    """Open the stream (its 200 means the server's subscription is live) and read its events in a thread."""
    received: queue.Queue[dict[str, Any]] = queue.Queue()
    client = httpx.Client(timeout=httpx.Timeout(10, read=30), cookies=session_cookie(user))
    response = client.send(client.build_request("GET", events_url(web, account)), stream=True)
    assert response.status_code == 200, response.read()
    assert response.headers["content-type"].startswith("text/event-stream")

    def read() -> None:
        try:
            for line in response.iter_lines():
                if line.startswith("data: "):
                    received.put(json.loads(line[len("data: ") :]))
        except (httpx.HTTPError, RuntimeError):
            pass

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        yield received
    finally:
        response.close()
        client.close()


def until_sentinel(received: queue.Queue, timeout: float = 10) -> list[dict[str, Any]]:
    got = []
    deadline = time.monotonic() + timeout
    while True:
        event = received.get(timeout=max(deadline - time.monotonic(), 0.01))
        if event.get("type") == SENTINEL:
            return got
        got.append(event)


def test_a_member_gets_the_accounts_events_and_their_own_never_another_accounts_or_persons(web, people):
    acme, globex = people["acme"], people["globex"]
    with stream(web, acme, people["alice"]) as alice, stream(web, globex, people["mallory"]) as mallory:
        publish_now(acme.id, {"type": "conversation", "conversation_id": 1})
        publish_now(acme.id, {"type": "notification", "user_id": people["bob"].id, "id": 7})
        publish_now(acme.id, {"type": "notification", "user_id": people["alice"].id, "id": 8})
        publish_now(globex.id, {"type": "conversation", "conversation_id": 2})
        publish_now(globex.id, {"type": "notification", "user_id": people["alice"].id, "id": 9})
        for account in (acme, globex):
            publish_now(account.id, {"type": SENTINEL})
        got_alice = until_sentinel(alice)
        got_mallory = until_sentinel(mallory)
    assert [(e["type"], e.get("conversation_id"), e.get("id")) for e in got_alice] == [
        ("conversation", 1, None),
        ("notification", None, 8),  # hers; bob's (7) never reached her stream
    ]
    # Another account's stream: its own conversation only; a person's event is that person's alone.
    assert [(e["type"], e.get("conversation_id"), e.get("id")) for e in got_mallory] == [
        ("conversation", 2, None)
    ]


def test_no_stream_for_a_non_member_or_a_visitor(web, people):
    acme = people["acme"]
    with httpx.Client(timeout=10, cookies=session_cookie(people["mallory"])) as client:
        other = client.get(events_url(web, acme))
        assert other.status_code == 404
        assert "text/event-stream" not in other.headers.get("content-type", "")
    with httpx.Client(timeout=10) as client:
        visitor = client.get(events_url(web, acme))
        assert visitor.status_code == 302 and "/login" in visitor.headers["location"]
    with httpx.Client(timeout=10, cookies=session_cookie(people["alice"])) as client:
        assert client.get(f"{web.url}/app/accounts/999999/events/").status_code == 404


def test_many_streams_of_one_process_share_one_redis_subscription(web, people, redis_server):
    watcher = redis.Redis.from_url(redis_server.url)
    acme = people["acme"]
    with (
        stream(web, acme, people["alice"]) as first,
        stream(web, acme, people["bob"]) as second,
        stream(web, acme, people["alice"]) as third,
    ):
        # The hub's two patterns (dashboard events, captain's live channel), once for the one worker.
        assert watcher.pubsub_numpat() == 2
        assert watcher.pubsub_numsub(f"helpdesk:events:{acme.id}") == [
            (f"helpdesk:events:{acme.id}".encode(), 0)
        ]
        publish_now(acme.id, {"type": "message", "conversation_id": 5})
        publish_now(acme.id, {"type": SENTINEL})
        for received in (first, second, third):
            assert [e["conversation_id"] for e in until_sentinel(received)] == [5]


def test_real_writes_publish_ids_and_never_message_text(web, people):
    acme = people["acme"]
    secret_text = "my card number is 4111 1111 1111 1111"
    with stream(web, acme, people["alice"]) as alice:
        conversation = ConversationFactory(contact_inbox__inbox=InboxFactory(account=acme))
        message_create_note(conversation=conversation, content=secret_text, user=people["alice"])
        conversation_assign(conversation=conversation, assignee=people["bob"], by=people["alice"])
        publish_now(acme.id, {"type": SENTINEL})
        got = until_sentinel(alice)
    kinds = [(e["type"], e.get("change")) for e in got]
    assert ("conversation", "created") in kinds
    assert ("message", None) in kinds
    assert ("conversation", "assignee") in kinds  # an .update() path
    assigned = next(e for e in got if e.get("change") == "assignee")
    assert assigned["assignee_id"] == people["bob"].id and assigned["conversation_id"] == conversation.id
    note = next(e for e in got if e["type"] == "message")
    assert note["private"] is True and "content" not in note
    assert all(
        e.get("conversation_id") == conversation.id for e in got if e["type"] in {"message", "conversation"}
    )
    assert secret_text not in json.dumps(got) and "4111" not in json.dumps(got)
