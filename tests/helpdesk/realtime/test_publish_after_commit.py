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
        conversation_set_priority(conversation=conversation, priority="urgent")
        raise Rollback
    assert drain(pubsub) == []

    with transaction.atomic():
        conversation_set_priority(conversation=conversation, priority="high")
        assert drain(pubsub, 0.2) == []  # not before the commit
    (event,) = drain(pubsub)
    assert event["type"] == "conversation" and event["change"] == "priority"
    assert event["conversation_id"] == conversation.id and event["priority"] == "high"
