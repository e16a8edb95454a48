"""The live views (server-sent events) on a real redis-server: what the run publishes streams to the page in
order, the stream ends on "end" (or when the run is over without saying so), heartbeats keep a quiet stream
open, and access is the playground's and the debug log's: another tenant gets 404, an agent 403, a visitor the
login page.

The views are async (the web server is ASGI): each request runs through Django's AsyncClient in an event loop
of its own (`async_to_sync`), whose database calls come back to the test's thread, and the process' hub
(helpdesk.realtime.hub) of that loop is closed when the stream is read."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
import redis
from asgiref.sync import async_to_sync
from django.test import AsyncClient

from captain.answering.services import live
from captain.answering.services.live import LivePublisher, live_end
from captain.answering.services.locks import conversation_lock
from captain.dashboard import live as live_stream
from captain.playground.models import PlaygroundRun
from captain.runtime import Agent, RunContext, RunEvent
from helpdesk.models import Membership
from helpdesk.realtime.hub import close_hub, get_hub
from tests.factories import (
    AccountFactory,
    AssistantFactory,
    ConversationFactory,
    InboxFactory,
    MembershipFactory,
    UserFactory,
)
from tests.support.servers import start_redis

pytestmark = pytest.mark.django_db

AGENT = Agent(key="orders", name="Orders", instructions="", model="m")


@pytest.fixture
def live_redis(redis_url, settings):
    settings.REDIS_URL = redis_url
    live._client.cache_clear()
    live._subscriber_client.cache_clear()
    yield redis_url
    live._client.cache_clear()
    live._subscriber_client.cache_clear()


@pytest.fixture
def fast_stream(monkeypatch):
    monkeypatch.setattr(live_stream, "CHECK_SECONDS", 0.1)
    monkeypatch.setattr(live_stream, "HEARTBEAT_SECONDS", 0.3)
    monkeypatch.setattr(live_stream, "MAX_STREAM_SECONDS", 5.0)


@pytest.fixture
def acme(db):
    account = AccountFactory(name="Acme")
    admin, agent = UserFactory(username="alice"), UserFactory(username="bob")
    MembershipFactory(account=account, user=admin, role=Membership.Role.ADMIN)
    MembershipFactory(account=account, user=agent, role=Membership.Role.AGENT)
    assistant = AssistantFactory(account=account)
    run = PlaygroundRun.objects.create(
        account=account, assistant=assistant, start_key="assistant", message="hi", status="running"
    )
    conversation = ConversationFactory(contact_inbox__inbox=InboxFactory(account=account))
    return {"account": account, "admin": admin, "agent": agent, "run": run, "conversation": conversation}


def playground_url(acme) -> str:
    return f"/app/accounts/{acme['account'].id}/playground/runs/{acme['run'].id}/live"


def conversation_url(acme) -> str:
    return f"/app/accounts/{acme['account'].id}/conversations/{acme['conversation'].id}/live"


class Streamed:
    """A response read whole (until the stream ended), cut into SSE frames as a browser's EventSource reads
    them (blocks ended by a blank line)."""

    def __init__(self, response, chunks: list[bytes]) -> None:
        self.status_code = response.status_code
        self.headers = response
        self.location = response.get("Location", "")
        text = b"".join(chunks).decode()
        self.frames = [frame for frame in text.split("\n\n") if frame] if response.streaming else []

    def __getitem__(self, name: str) -> str:
        return self.headers[name]


def fetch(client, url: str, *, during=None) -> Streamed:
    """GET through the async client with `client`'s session; `during` runs in a thread once the stream is open
    (what a worker publishes meanwhile)."""

    async def run() -> Streamed:
        async_client = AsyncClient()
        async_client.cookies = client.cookies
        try:
            response = await async_client.get(url)
            chunks: list[bytes] = []
            if response.streaming:
                thread = later(0.05, during) if during else None
                chunks = [chunk async for chunk in response.streaming_content]
                if thread:
                    thread.join()
            return Streamed(response, chunks)
        finally:
            await close_hub()

    return async_to_sync(run)()


def frames(streamed: Streamed) -> list[str]:
    return streamed.frames


def data_of(frame: str) -> dict[str, Any] | None:
    lines = [line[len("data: ") :] for line in frame.splitlines() if line.startswith("data: ")]
    return json.loads("\n".join(lines)) if lines else None


def later(seconds: float, action) -> threading.Thread:
    thread = threading.Thread(target=lambda: (time.sleep(seconds), action()), daemon=True)
    thread.start()
    return thread


def test_playground_stream_relays_thoughts_and_events_in_order_and_ends_on_end(client, acme, live_redis):
    client.force_login(acme["admin"])
    scope = f"playground:{acme['run'].id}"
    context = RunContext(account_id=acme["account"].id, conversation_id=None)

    def run() -> None:  # what the worker publishes while the turn runs
        publisher = LivePublisher(scope, secrets=())
        publisher.on_thought(context, AGENT, "Checking ")
        publisher.on_thought(context, AGENT, "the order.")
        publisher.on_event(context, AGENT, RunEvent("plan", "orders", data={"plan": {"status": "active"}}))
        live_end(scope)

    # The view subscribed before it answered: what is published from now on is not missed.
    started = time.monotonic()
    response = fetch(client, playground_url(acme), during=run)
    assert response.status_code == 200
    assert response["Content-Type"] == "text/event-stream"
    assert "no-cache" in response["Cache-Control"] and "no-store" in response["Cache-Control"]
    received = []
    for frame in frames(response):
        if frame.startswith("retry:"):
            assert ": connected" in frame
            continue
        message = data_of(frame)
        if message is not None:
            received.append(message)
    assert time.monotonic() - started < 5  # ended on "end", not by its maximum duration
    assert [m["type"] for m in received] == ["thought", "thought", "event", "end"]
    assert "".join(m["text"] for m in received[:2]) == "Checking the order."
    assert received[2]["event"]["data"]["plan"] == {"status": "active"}


def test_a_quiet_stream_sends_heartbeats_and_stops_at_its_maximum_duration(
    client, acme, live_redis, fast_stream, monkeypatch
):
    monkeypatch.setattr(live_stream, "MAX_STREAM_SECONDS", 1.0)
    client.force_login(acme["admin"])
    started = time.monotonic()
    got = list(frames(fetch(client, playground_url(acme))))
    elapsed = time.monotonic() - started
    heartbeats = [f for f in got if f == ": heartbeat"]
    assert len(heartbeats) >= 2
    assert not any(data_of(f) for f in got)  # nothing happened, and the run is not over
    assert 0.9 <= elapsed < 3


def test_a_turn_already_over_ends_the_stream_at_once(client, acme, live_redis):
    PlaygroundRun.objects.filter(pk=acme["run"].pk).update(status=PlaygroundRun.Status.DONE)
    client.force_login(acme["admin"])
    got = [data_of(f) for f in frames(fetch(client, playground_url(acme)))]
    assert [m["type"] for m in got if m] == ["end"]


def test_conversation_stream_follows_the_run_holding_the_lock(client, acme, live_redis, fast_stream):
    conversation = acme["conversation"]
    lease = conversation_lock(conversation.id)
    assert lease.acquire()
    client.force_login(acme["admin"])
    publisher = LivePublisher(f"conversation:{conversation.id}", secrets=())
    context = RunContext(account_id=acme["account"].id, conversation_id=conversation.id)

    def run() -> None:
        publisher.on_thought(context, AGENT, "The customer wants a refund.")
        time.sleep(0.3)
        lease.release()  # the run is over; its end message is lost (no live_end): the stream still ends

    response = fetch(client, conversation_url(acme), during=run)
    assert response.status_code == 200
    got = [data_of(f) for f in frames(response)]
    messages = [m for m in got if m]
    assert messages[0]["type"] == "thought" and messages[0]["text"] == "The customer wants a refund."
    assert messages[-1]["type"] == "end"


def test_conversation_stream_without_a_run_in_progress_ends_at_once(client, acme, live_redis):
    client.force_login(acme["admin"])
    got = [data_of(f) for f in frames(fetch(client, conversation_url(acme)))]
    assert [m["type"] for m in got if m] == ["end"]


def test_another_tenant_gets_404_an_agent_403_and_a_visitor_the_login_page(client, acme, live_redis):
    other = AccountFactory(name="Globex")
    mallory = UserFactory(username="mallory")
    MembershipFactory(account=other, user=mallory, role=Membership.Role.ADMIN)
    # Anonymous: the login page, nothing streamed.
    for url in (playground_url(acme), conversation_url(acme)):
        response = client.get(url)
        assert response.status_code == 302 and "/login" in response["Location"]
    # Another tenant's admin, with the victim's account in the URL, and with its own account in the URL.
    client.force_login(mallory)
    for url in (playground_url(acme), conversation_url(acme)):
        assert client.get(url).status_code == 404
    assert client.get(f"/app/accounts/{other.id}/playground/runs/{acme['run'].id}/live").status_code == 404
    assert (
        client.get(f"/app/accounts/{other.id}/conversations/{acme['conversation'].id}/live").status_code
        == 404
    )
    # An agent of the account: the pages are for administrators.
    client.force_login(acme["agent"])
    assert client.get(playground_url(acme)).status_code == 403
    assert client.get(conversation_url(acme)).status_code == 403


def test_redis_down_answers_503_quickly(client, acme, settings):
    server = start_redis()
    settings.REDIS_URL = server.url
    server.stop()
    client.force_login(acme["admin"])
    started = time.monotonic()
    response = fetch(client, playground_url(acme))
    assert response.status_code == 503
    assert time.monotonic() - started < 5
    with pytest.raises(redis.RedisError):
        redis.Redis.from_url(server.url, socket_connect_timeout=0.5).ping()


def test_the_playground_page_opens_the_live_view_of_its_pending_turn(client, acme):
    client.force_login(acme["admin"])
    url = f"/app/accounts/{acme['account'].id}/playground/"
    response = client.post(
        url,
        {"assistant": acme["run"].assistant_id, "start_key": "assistant", "message": "where is my order?"},
    )
    assert response.status_code == 302
    pending = PlaygroundRun.objects.exclude(pk=acme["run"].pk).get()
    html = client.get(response["Location"]).content.decode()
    live_url = f"/app/accounts/{acme['account'].id}/playground/runs/{pending.pk}/live"
    assert f'data-live-url="{live_url}"' in html and 'data-reload-on-end="1"' in html
    assert "captain/live.js" in html
    assert "never shown to the customer" in html  # the panel says it is internal
    # Without script the page still reloads itself while the turn runs.
    assert '<noscript><meta http-equiv="refresh" content="1"></noscript>' in html


def test_a_stream_closed_unread_releases_its_listener_and_streams_share_one_subscription(
    client, acme, live_redis
):
    """What the server does when the browser goes away before the first frame: closing the response releases
    the stream's place in the process' hub. Streams never subscribe on their own: the hub's two patterns are
    the process' only subscription, however many streams are open."""
    channel = f"captain:live:playground:{acme['run'].id}"
    watcher = redis.Redis.from_url(live_redis)
    client.force_login(acme["admin"])

    async def run() -> tuple[int, int, int, int]:
        async_client = AsyncClient()
        async_client.cookies = client.cookies
        try:
            first = await async_client.get(playground_url(acme))
            second = await async_client.get(playground_url(acme))
            hub = get_hub()
            open_streams, patterns = hub.stream_count, watcher.pubsub_numpat()
            per_channel = dict(watcher.pubsub_numsub(channel))[channel.encode()]
            first.close()
            second.close()
            return open_streams, patterns, per_channel, hub.stream_count
        finally:
            await close_hub()

    open_streams, patterns, per_channel, after_close = async_to_sync(run)()
    assert (open_streams, patterns, per_channel) == (2, 2, 0)
    assert after_close == 0
