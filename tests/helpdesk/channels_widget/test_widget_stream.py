"""The visitor event stream on the real web server (ASGI) and a real redis-server: a visitor hears about their own
conversation only (a reply stored, the AI or a person composing), with ids and no content; another origin gets
nothing."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest
import redis

from helpdesk.channels.widget import visitor_token
from helpdesk.realtime.publish import account_channel
from tests.factories import ContactFactory, ContactInboxFactory, ConversationFactory
from tests.helpdesk.channels_widget.support import PAGE, widget_inbox
from tests.support.servers import start_test_web_server

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def read_events(response: httpx.Response, into: list[dict], stop: threading.Event) -> None:
    try:
        for line in response.iter_lines():
            if line.startswith("data: "):
                into.append(json.loads(line[6:]))
            if stop.is_set():
                return
    except httpx.ReadError:
        # The test closed the stream under this reader when it was done; any other end is an error.
        if not stop.is_set():
            raise


def wait_for_count(events: list[dict], count: int) -> None:
    deadline = time.monotonic() + 15
    while len(events) < count and time.monotonic() < deadline:
        time.sleep(0.1)


def test_the_stream_carries_the_visitors_replies_and_the_typing_and_nothing_else(redis_url, tmp_path):
    inbox = widget_inbox()
    contact = ContactFactory(account=inbox.account)
    mine = ConversationFactory(
        account=inbox.account,
        inbox=inbox,
        contact=contact,
        contact_inbox=ContactInboxFactory(contact=contact, inbox=inbox, source_id="visitor:me"),
    )
    other_contact = ContactFactory(account=inbox.account)
    theirs = ConversationFactory(
        account=inbox.account,
        inbox=inbox,
        contact=other_contact,
        contact_inbox=ContactInboxFactory(contact=other_contact, inbox=inbox, source_id="visitor:other"),
    )
    token = visitor_token(inbox_id=inbox.pk, source_id="visitor:me")

    def mine_message(message_id: int) -> dict:
        return {
            "type": "message",
            "conversation_id": mine.id,
            "inbox_id": inbox.pk,
            "message_id": message_id,
            "message_type": "outgoing",
            "private": False,
        }

    server = start_test_web_server(redis_url=redis_url, tmp_path=tmp_path)
    publisher = redis.Redis.from_url(redis_url)
    events: list[dict] = []
    stop = threading.Event()
    try:
        url = f"{server.url}/widget/{inbox.webhook_token}/events/?visitor_token={token}"
        refused = httpx.get(url, headers={"Origin": "http://evil.example"}, timeout=10)
        assert refused.status_code == 403
        with httpx.stream("GET", url, headers={"Origin": PAGE}, timeout=30) as response:
            assert response.status_code == 200
            assert response.headers["access-control-allow-origin"] == PAGE
            reader = threading.Thread(target=read_events, args=(response, events, stop), daemon=True)
            reader.start()
            time.sleep(1.0)  # the stream is subscribed once its first bytes came; leave the hub a moment
            for conversation, message_id in ((theirs, 91), (mine, 92)):
                publisher.publish(
                    account_channel(inbox.account_id),
                    json.dumps(
                        {
                            "type": "message",
                            "conversation_id": conversation.id,
                            "inbox_id": inbox.pk,
                            "message_id": message_id,
                            "message_type": "outgoing",
                            "private": False,
                        }
                    ),
                )
            publisher.publish(
                f"captain:live:conversation:{theirs.id}", json.dumps({"type": "thought", "text": "x"})
            )
            publisher.publish(
                f"captain:live:conversation:{mine.id}", json.dumps({"type": "thought", "text": "secret plan"})
            )
            publisher.publish(f"captain:live:conversation:{mine.id}", json.dumps({"type": "end"}))
            wait_for_count(events, 3)
            # A person composing: in their conversation only; a bare "typing" on the account's channel (every
            # visitor's) reaches nobody. A message of the visitor's after each group marks where it ends.
            for group in (
                [
                    {"type": "agent_typing", "conversation_id": theirs.id, "user_id": 5},
                    {"type": "typing"},
                    {"type": "typing", "conversation_id": theirs.id},
                    mine_message(93),
                ],
                [{"type": "agent_typing", "conversation_id": mine.id, "user_id": 5}, mine_message(94)],
            ):
                for event in group:
                    publisher.publish(account_channel(inbox.account_id), json.dumps(event))
            wait_for_count(events, 6)
            stop.set()
    finally:
        server.stop()
    # The pieces arrive on two channels, so in either order; the AI's text never.
    assert sorted(events[:3], key=json.dumps) == sorted(
        [{"type": "message", "message_id": 92}, {"type": "typing"}, {"type": "typing_end"}], key=json.dumps
    )
    # Nobody else's typing; a person typing in the visitor's conversation looks as the AI's does.
    assert events[3:] == [
        {"type": "message", "message_id": 93},
        {"type": "typing"},
        {"type": "message", "message_id": 94},
    ]
