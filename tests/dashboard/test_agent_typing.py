"""The composer's "a person is writing a reply" signal (helpdesk/views/typing.py): a member's POST publishes
`{"type": "agent_typing", "conversation_id"}` on the account's channel of the real redis-server, at most once per
conversation per TYPING_EVERY_SECONDS (a Redis key with a time to live, shared by every web process); another
account's conversation is a 404 that publishes nothing; a POST without the CSRF token is refused.

What was published is read from a real subscription up to a sentinel the test publishes last, so "nothing" is
an observation, not a wait that happened to be too short."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from django.test import Client

from helpdesk.realtime import publish
from helpdesk.realtime.publish import account_channel, publish_now
from helpdesk.realtime.typing import KEY_PREFIX, TYPING_EVERY_SECONDS
from tests.factories import ConversationFactory

pytestmark = pytest.mark.django_db

SENTINEL = {"type": "test-sentinel"}


@pytest.fixture
def channel(redis_url, settings, team) -> Iterator[Any]:
    """A subscription to the team's account channel, open before anything is published."""
    settings.REDIS_URL = redis_url
    publish._client.cache_clear()
    client = redis.Redis.from_url(redis_url)
    pubsub = subscribed(client, team.account.id)
    try:
        yield pubsub
    finally:
        pubsub.close()
        client.close()
        publish._client.cache_clear()


def subscribed(client: redis.Redis, account_id: int) -> Any:
    """A subscription to the account's channel that Redis has confirmed (what is published next reaches it)."""
    pubsub = client.pubsub()
    pubsub.subscribe(account_channel(account_id))
    confirmation = pubsub.get_message(timeout=5)
    assert confirmation is not None and confirmation["type"] == "subscribe"
    return pubsub


def published(pubsub, account_id: int) -> list[dict[str, Any]]:
    """Everything published on the channel before the sentinel (publishing is synchronous in the view)."""
    assert publish_now(account_id, SENTINEL)
    events = []
    while True:
        message = pubsub.get_message(timeout=5)
        assert message is not None, "the sentinel never arrived"
        if message["type"] != "message":
            continue  # the confirmation of a subscription
        event = json.loads(message["data"])
        if event["type"] == SENTINEL["type"]:
            return events
        events.append({key: value for key, value in event.items() if key != "at"})


def typing_url(account_id: int, conversation_id: int) -> str:
    return f"/app/accounts/{account_id}/conversations/{conversation_id}/typing/"


def test_typing_in_a_reply_publishes_agent_typing_for_the_conversation(agent_client, team, channel):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    response = agent_client.post(typing_url(team.account.id, conversation.id))
    assert response.status_code == 204
    assert published(channel, team.account.id) == [
        {"type": "agent_typing", "conversation_id": conversation.id}
    ]


def test_another_accounts_conversation_is_a_404_and_publishes_nothing(
    agent_client, team, other_team, channel, redis_url
):
    theirs = ConversationFactory(contact_inbox__inbox=other_team.inbox, status="open")
    their_client = redis.Redis.from_url(redis_url)  # kept: a collected client closes its connections
    their_channel = subscribed(their_client, other_team.account.id)
    try:
        # Their conversation under our account's URL, and under theirs (not a member there).
        assert agent_client.post(typing_url(team.account.id, theirs.id)).status_code == 404
        assert agent_client.post(typing_url(other_team.account.id, theirs.id)).status_code == 404
        assert published(channel, team.account.id) == []
        assert published(their_channel, other_team.account.id) == []
    finally:
        their_channel.close()
        their_client.close()
    assert redis.Redis.from_url(redis_url).keys(f"{KEY_PREFIX}*") == []


def test_two_signals_within_the_window_publish_once_and_the_window_expires(
    agent_client, team, channel, redis_url
):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    other = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    url = typing_url(team.account.id, conversation.id)
    assert agent_client.post(url).status_code == 204
    assert agent_client.post(url).status_code == 204  # a fast typist: answered, not published again
    # Another person typing in the same conversation shares the window.
    colleague = Client()
    colleague.force_login(team.admin)
    assert colleague.post(url).status_code == 204
    # Another conversation has its own window.
    assert agent_client.post(typing_url(team.account.id, other.id)).status_code == 204
    assert published(channel, team.account.id) == [
        {"type": "agent_typing", "conversation_id": conversation.id},
        {"type": "agent_typing", "conversation_id": other.id},
    ]
    store = redis.Redis.from_url(redis_url)
    key = f"{KEY_PREFIX}{conversation.id}"
    assert 0 < store.pttl(key) <= TYPING_EVERY_SECONDS * 1000  # it expires on its own
    store.delete(key)  # the window has passed
    assert agent_client.post(url).status_code == 204
    assert published(channel, team.account.id) == [
        {"type": "agent_typing", "conversation_id": conversation.id}
    ]


def test_the_signal_needs_a_post_with_the_csrf_token_from_a_member(team, channel):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    url = typing_url(team.account.id, conversation.id)
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(team.agent)
    assert strict.post(url).status_code == 403
    assert strict.get(url).status_code == 405
    assert Client().post(url).status_code == 302  # not signed in: to the sign-in page
    assert published(channel, team.account.id) == []
    # With the token the page carries, the same person's signal goes through.
    page = strict.get(f"/app/accounts/{team.account.id}/conversations/{conversation.id}/")
    assert page.status_code == 200
    assert f'data-typing-url="{url}"' in page.content.decode()
    token = strict.cookies["csrftoken"].value
    assert strict.post(url, headers={"X-CSRFToken": token}).status_code == 204
    assert published(channel, team.account.id) == [
        {"type": "agent_typing", "conversation_id": conversation.id}
    ]
