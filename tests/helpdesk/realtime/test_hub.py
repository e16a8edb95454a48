"""The process' hub on a real redis-server: one subscription fans out to every listener of a channel, a
listener too slow to keep up gets `resync` instead of an unbounded queue, and after Redis goes away and comes
back the hub resubscribes by itself and tells every listener to `resync` (events in between are lost)."""

from __future__ import annotations

import asyncio
import json

import redis

from helpdesk.realtime import hub as hub_module
from helpdesk.realtime.hub import Hub
from tests.support.servers import start_redis


def publish(url: str, channel: str, event: dict) -> None:
    redis.Redis.from_url(url).publish(channel, json.dumps(event))


def test_fan_out_and_a_slow_listener_gets_resync(redis_server, monkeypatch):
    monkeypatch.setattr(hub_module, "QUEUE_SIZE", 3)

    async def run() -> tuple[list, list, list, int]:
        hub = Hub(redis_server.url)
        fast, slow = hub.listen("helpdesk:events:1"), hub.listen("helpdesk:events:1")
        other = hub.listen("helpdesk:events:2")
        assert await hub.wait_ready(5)
        got_fast = []
        for n in range(5):
            await asyncio.to_thread(publish, redis_server.url, "helpdesk:events:1", {"type": "x", "n": n})
            got_fast.append(await fast.get(timeout=5))
        await asyncio.sleep(0.2)
        got_slow = []  # read only now: 5 events into a queue of 3
        while (event := await slow.get(timeout=0.2)) is not None:
            got_slow.append(event)
        got_other = [await other.get(timeout=0.3)]
        numpat = redis.Redis.from_url(redis_server.url).pubsub_numpat()
        for listener in (fast, slow, other):
            listener.close()
        assert hub.stream_count == 0
        await hub.close()
        return got_fast, got_slow, got_other, numpat

    got_fast, got_slow, got_other, numpat = asyncio.run(run())
    assert [e["n"] for e in got_fast] == [0, 1, 2, 3, 4]
    assert got_slow == [{"type": "resync"}, {"type": "x", "n": 4}]  # dropped 0-3, told to reload
    assert got_other == [None]  # another channel's listener saw nothing
    assert numpat == 2


def test_the_hub_resubscribes_after_redis_comes_back_and_says_resync(monkeypatch):
    monkeypatch.setattr(hub_module, "READ_SECONDS", 0.5)
    server = start_redis()
    port = server.port

    async def run() -> list:
        nonlocal server
        hub = Hub(server.url)
        listener = hub.listen("captain:live:playground:9")
        assert await hub.wait_ready(5)
        server.stop()
        await asyncio.sleep(1.0)
        assert not hub.ready.is_set()
        server = await asyncio.to_thread(start_redis, port)
        assert await hub.wait_ready(15)
        await asyncio.to_thread(publish, server.url, "captain:live:playground:9", {"type": "thought"})
        got = [await listener.get(timeout=5), await listener.get(timeout=5)]
        await hub.close()
        return got

    try:
        assert asyncio.run(run()) == [{"type": "resync"}, {"type": "thought"}]
    finally:
        server.stop()
