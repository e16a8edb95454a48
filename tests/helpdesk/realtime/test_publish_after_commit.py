"""Dashboard events leave only when the change commits: a rolled back write publishes nothing, a committed one
publishes once, on the account's channel (real redis-server)."""

from __future__ import annotations

import json
import time

import pytest
import redis
from django.db import transaction

from helpdesk.realtime.publish import account_channel
from helpdesk.services.conversations import conversation_set_priority
from tests.factories import AccountFactory, ConversationFactory, InboxFactory
from tests.support.servers import free_port

pytestmark = pytest.mark.django_db(transaction=True)


class Rollback(Exception):
    pass


def drain(pubsub, seconds: float = 0.5) -> list[dict]:
    got, deadline = [], time.monotonic() + seconds
    while time.monotonic() < deadline:
        raw = pubsub.get_message(ignore_subscribe_messages=True, timeout=0.05)
        if raw and raw["type"] == "message":
            got.append(json.loads(raw["data"]))
    return got


def test_a_rolled_back_change_publishes_nothing_and_a_committed_one_publishes(redis_server):
    account = AccountFactory()
    inbox = InboxFactory(account=account)
    conversation = ConversationFactory(contact_inbox__inbox=inbox)
    pubsub = redis.Redis.from_url(redis_server.url).pubsub()
    pubsub.subscribe(account_channel(account.id))
    drain(pubsub, 0.2)

    with pytest.raises(Rollback), transaction.atomic():
        ConversationFactory(contact_inbox__inbox=inbox)
        conversation_set_priority(conversation=conversation, priority="urgent", by="The AI")
        raise Rollback
    assert drain(pubsub) == []

    with transaction.atomic():
        conversation_set_priority(conversation=conversation, priority="high", by="The AI")
        assert drain(pubsub, 0.2) == []  # not before the commit
    # The change and its activity line ("The AI set the priority to high.").
    event, line = drain(pubsub)
    assert line["type"] == "message" and line["message_type"] == "activity"
    assert event["type"] == "conversation" and event["change"] == "priority"
    assert event["conversation_id"] == conversation.id and event["priority"] == "high"


def test_an_unreachable_redis_costs_one_connect_timeout_then_events_are_skipped_for_a_moment(settings):
    """During an outage each webhook or worker would otherwise wait one connect timeout per event."""
    from helpdesk.realtime import publish

    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    publish._client.cache_clear()
    try:
        assert publish.publish_now(1, {"type": "conversation"}) is False
        started = time.monotonic()
        assert publish.publish_now(1, {"type": "conversation"}) is False
        assert time.monotonic() - started < 0.05  # skipped, not tried again
        publish._skip_until = 0.0  # the window has passed: it tries (and fails) again
        assert publish.publish_now(1, {"type": "conversation"}) is False
        assert publish._skip_until > time.monotonic()
    finally:
        publish._skip_until = 0.0
        publish._client.cache_clear()
