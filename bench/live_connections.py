"""How many live-update streams one web process holds, at what memory, and how fast an event reaches them all.

    python -m bench.live_connections [--streams 500] [--events 5] [--json]

Real parts only: a redis-server and ONE web process (gunicorn with a single uvicorn worker on config.asgi, as
`scripts/run` starts two of them). `--streams` signed-in server-sent-events streams are opened on the account's
event stream (`/app/accounts/<id>/events/`) from asyncio sockets in this process. Then `--events` events are
published on the account's Redis channel, each stamped with its publish time; every stream must receive every
event. Printed: the worker's resident memory (VmRSS) after a warm-up request and with all streams open (the
difference divided by the number of streams is the memory per connection), the number of Redis subscriptions
the worker holds for all of them (PUBSUB NUMPAT: 2 patterns = one subscription), and the fan-out latency from
PUBLISH to the frame read by a client (p50/p95/max over all streams and events). Goal (issue 16): 500 streams in
one process, with the memory stated.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

from bench.live_common import load_average, percentile, rss_mb, session_cookie, start_stack


def _threads(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return -1


async def _open_stream(
    port: int, path: str, cookie: str
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: sessionid={cookie}\r\n"
        "Accept: text/event-stream\r\n\r\n".encode()
    )
    await writer.drain()
    status = await reader.readline()
    if b" 200 " not in status:
        raise RuntimeError(f"stream refused: {status!r}")
    while (await reader.readline()) not in (b"\r\n", b""):
        pass
    return reader, writer


async def _read_events(reader: asyncio.StreamReader, want: int, arrivals: list[tuple[int, float]]) -> None:
    got = 0
    while got < want:
        line = await reader.readline()
        if not line:
            return
        # Chunked transfer: data lines arrive between chunk-size lines; we only look at the data lines.
        if line.startswith(b"data: "):
            event = json.loads(line[len(b"data: ") :])
            if event.get("type") == "bench":
                arrivals.append((event["n"], time.time() - event["published_at"]))
                got += 1


async def _run_async(args: argparse.Namespace, port: int, path: str, cookie: str, worker_pid: int) -> dict:
    import redis

    from helpdesk.realtime.publish import account_channel

    rss_warm = rss_mb(worker_pid)
    started = time.monotonic()
    streams = []
    for batch in range(0, args.streams, 50):  # 50 at a time: the listen backlog, not the server, is the limit
        streams += await asyncio.gather(
            *(_open_stream(port, path, cookie) for _ in range(min(50, args.streams - batch)))
        )
    open_seconds = time.monotonic() - started
    await asyncio.sleep(1.0)  # let the worker settle (allocations, first heartbeats pending)
    rss_open = rss_mb(worker_pid)
    threads_open = _threads(worker_pid)
    client = redis.Redis.from_url(args.redis_url)
    subscriptions = client.pubsub_numpat()
    arrivals: list[tuple[int, float]] = []
    readers = [asyncio.create_task(_read_events(reader, args.events, arrivals)) for reader, _ in streams]
    await asyncio.sleep(0.2)
    for n in range(args.events):
        client.publish(
            account_channel(args.account_id),
            json.dumps({"type": "bench", "n": n, "published_at": time.time()}),
        )
        await asyncio.sleep(args.event_spacing)
    await asyncio.wait(readers, timeout=30)
    for _, writer in streams:
        writer.close()
    await asyncio.sleep(2.0)
    rss_closed = rss_mb(worker_pid)
    # The same number again: how much of the first figure was the process' high-water mark (memory Python
    # keeps once allocated) rather than what an open stream holds.
    again = []
    for batch in range(0, args.streams, 50):
        again += await asyncio.gather(
            *(_open_stream(port, path, cookie) for _ in range(min(50, args.streams - batch)))
        )
    await asyncio.sleep(1.0)
    rss_reopened = rss_mb(worker_pid)
    for _, writer in again:
        writer.close()
    latencies = [latency for _, latency in arrivals]
    return {
        "streams": args.streams,
        "events": args.events,
        "opened_in_s": round(open_seconds, 2),
        "received": len(arrivals),
        "expected": args.streams * args.events,
        "every_stream_got_every_event": len(arrivals) == args.streams * args.events,
        "redis_pattern_subscriptions": subscriptions,
        "worker_rss_warm_mb": round(rss_warm, 1),
        "worker_rss_open_mb": round(rss_open, 1),
        "kb_per_stream": round((rss_open - rss_warm) * 1024 / args.streams, 1),
        "worker_threads_open": threads_open,
        "worker_rss_closed_mb": round(rss_closed, 1),
        "worker_rss_reopened_mb": round(rss_reopened, 1),
        "fanout_p50_ms": round(percentile(latencies, 0.5) * 1000, 1),
        "fanout_p95_ms": round(percentile(latencies, 0.95) * 1000, 1),
        "fanout_max_ms": round(max(latencies) * 1000, 1) if latencies else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--streams", type=int, default=500)
    parser.add_argument("--events", type=int, default=5)
    parser.add_argument("--event-spacing", type=float, default=0.5, help="seconds between published events")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()

    load_before = load_average()
    stack = start_stack(web_workers=1, prefix="bench-live-connections-")
    try:
        result = _run(args, stack)
    finally:
        stack.stop()
    result["load_average_before"] = load_before
    result["load_average_after"] = load_average()
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"{result['streams']} SSE streams on ONE web process (uvicorn worker), {result['events']} events "
        f"(load before/after: {result['load_average_before']} / {result['load_average_after']})"
    )
    print(
        f"  opened in {result['opened_in_s']} s; events received {result['received']}/{result['expected']}; "
        f"Redis subscriptions for all of them: {result['redis_pattern_subscriptions']} patterns (one connection)"
    )
    print(
        f"  worker RSS {result['worker_rss_warm_mb']} MB warm -> {result['worker_rss_open_mb']} MB with the "
        f"streams open = {result['kb_per_stream']} KB per stream ({result['worker_threads_open']} threads)"
    )
    print(
        f"  all closed: {result['worker_rss_closed_mb']} MB; the same number opened again: "
        f"{result['worker_rss_reopened_mb']} MB"
    )
    print(
        f"  fan-out PUBLISH -> frame read: p50 {result['fanout_p50_ms']} ms  p95 {result['fanout_p95_ms']} ms  "
        f"max {result['fanout_max_ms']} ms"
    )


def _run(args: argparse.Namespace, stack: Any) -> dict[str, Any]:
    import urllib.request

    from helpdesk.models import Membership
    from tests.factories import AccountFactory, MembershipFactory, UserFactory

    account = AccountFactory(name="Bench")
    agent = UserFactory(username="watcher")
    MembershipFactory(account=account, user=agent, role=Membership.Role.AGENT)
    cookie = session_cookie(agent)
    (worker_pid,) = stack.web.worker_pids()
    # Warm-up: one ordinary page and one stream, so the first-request imports are not counted per stream.
    request = urllib.request.Request(
        f"{stack.web.url}/app/accounts/{account.id}/lists/unassigned/",
        headers={"Cookie": f"sessionid={cookie}"},
    )
    urllib.request.urlopen(request, timeout=30).read()
    path = f"/app/accounts/{account.id}/events/"

    async def warm() -> None:
        _, writer = await _open_stream(stack.web.port, path, cookie)
        await asyncio.sleep(0.5)
        writer.close()

    asyncio.run(warm())
    time.sleep(0.5)
    args.account_id = account.id
    args.redis_url = stack.redis.url
    return asyncio.run(_run_async(args, stack.web.port, path, cookie, worker_pid))


if __name__ == "__main__":
    main()
