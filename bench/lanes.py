"""Customers first: a customer's reply while a team's 12 new help-centre documents are being processed.

    python -m bench.lanes [--delay 2.0] [--slots 2] [--customers 3] [--modes one-queue,lanes]

The situation that once made a customer wait 195 s: an admin uploads 12 documents (the `harbour` help centre),
each is read, chunked and embedded (CPU), then FAQ pairs are drafted from it (model calls); meanwhile customers
write in. Real parts: a redis-server, gunicorn serving the app (the webhook is a real HTTP request), Celery worker
processes as `scripts/run` starts them, the real document pipeline and encoder, and a scripted OpenAI-compatible
model that answers every call after `--delay` seconds and serves at most `--slots` calls at once (the bundled
model's server has two slots; more calls queue inside it, as they do there).

For each mode, in one run:
- `one-queue`: every AI task on one queue and one 8-thread worker, no model gate (`CAPTAIN_LANES=0`, the
  behaviour before lanes);
- `lanes`: the customer worker (8 threads) and the background worker (2 threads, `nice -n 10`) with the model
  gate (`scripts/run`'s setup).

it measures the reply latency (webhook acknowledged -> reply POSTed to the customer's callback) of `--customers`
customers on an idle system, then of `--customers` customers writing 1 s after the 12 uploads, one after another.
The goal: under load, at most the idle latency plus one background model call (`--delay`).
"""

from __future__ import annotations

import argparse
import json
import mimetypes
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench.live_common import worker_bench_django
from bench.webhook_throughput import Receiver, _up

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "bench" / "knowledge" / "data" / "harbour" / "docs"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--delay", type=float, default=2.0, help="the scripted model's time per call (s)")
    parser.add_argument("--slots", type=int, default=2, help="calls the scripted model serves at once")
    parser.add_argument("--customers", type=int, default=3, help="customers measured idle, and under load")
    parser.add_argument("--modes", default="one-queue,lanes")
    parser.add_argument("--timeout", type=float, default=600.0, help="per customer, for the reply to arrive")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="bench-lanes-"))
    redis_server = worker_bench_django(workdir)
    from tests.support.fake_llm_server import FakeLLMServer, last_user_message, text
    from tests.support.servers import free_port, stop_process, wait_for

    slots = threading.Semaphore(args.slots)

    def responder(request: dict[str, Any]) -> Any:
        # One server slot per call for `delay` seconds: calls beyond the slots wait here, as in llama.cpp.
        with slots:
            time.sleep(args.delay)
        marker = last_user_message(request)
        return text(f"Answer for {marker.split(' ', 1)[0]}." if marker.startswith("cust-") else "[]")

    model = FakeLLMServer(responder=responder).start()
    receiver = Receiver()
    port = free_port()
    env = {
        **os.environ,
        "OPENAI_BASE_URL": model.base_url,
        "OPENAI_API_KEY": "bench",
        "CAPTAIN_DEBOUNCE_SECONDS": "0",
        "CAPTAIN_LLM_TIMEOUT": str(max(30.0, args.delay * 20)),
        "CAPTAIN_MODEL_GATE_SLOTS": str(args.slots),
    }
    web = subprocess.Popen(
        [
            *(sys.executable, "-m", "gunicorn", "config.asgi:application"),
            *("--worker-class", "uvicorn_worker.UvicornWorker", "--bind", f"127.0.0.1:{port}"),
            *("--workers", "1", "--log-level", "warning"),
        ],
        cwd=ROOT,
        env=env,
    )
    results: dict[str, dict[str, list[float]]] = {}
    try:
        wait_for(lambda: _up(port), timeout=60, what="gunicorn")
        for mode in args.modes.split(","):
            results[mode] = _run_mode(args, mode, env, port, receiver, workdir)
            redis_server_flush(redis_server.url)
    finally:
        stop_process(web)
        model.stop()
        receiver.server.shutdown()
        redis_server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    _print(args, results)


def redis_server_flush(url: str) -> None:
    import redis

    redis.Redis.from_url(url).flushall()


def _workers(mode: str, env: dict[str, str], workdir: Path) -> list[subprocess.Popen]:
    from tests.support.servers import wait_for

    celery = [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool", "threads", "-l", "INFO"]
    specs: list[tuple[list[str], str, str, int]]
    if mode == "one-queue":
        specs = [([], "solo@%h", "helpdesk,captain", 8)]
    else:
        specs = [
            ([], "customer@%h", "helpdesk,captain", 8),
            (["nice", "-n", "10"], "background@%h", "captain_background", 2),
        ]
    procs: list[subprocess.Popen] = []
    for prefix, name, queues, concurrency in specs:
        log_path = workdir / f"{mode}-{name.split('@')[0]}.log"
        argv = [*prefix, *celery, "-n", name, "-Q", queues, "--concurrency", str(concurrency)]
        with log_path.open("w") as log:
            procs.append(subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT))
        wait_for(lambda path=log_path: " ready." in path.read_text(errors="replace"), timeout=60, what=name)
    return procs


def _run_mode(
    args: argparse.Namespace, mode: str, env: dict[str, str], port: int, receiver: Receiver, workdir: Path
) -> dict[str, list[float]]:
    from captain.knowledge.services.knowledge import document_create_upload
    from tests.factories import AssistantInboxFactory
    from tests.support.servers import stop_process

    mode_env = {**env, "CAPTAIN_LANES": "0" if mode == "one-queue" else "1"}
    link: Any = AssistantInboxFactory(inbox__secret="bench-secret", inbox__callback_url=receiver.url)
    workers = _workers(mode, mode_env, workdir)
    url = f"http://127.0.0.1:{port}/webhooks/api/{link.inbox.webhook_token}/"
    measured: dict[str, list[float]] = {"idle": [], "load": []}
    try:
        for i in range(args.customers):
            measured["idle"].append(_reply_seconds(url, receiver, f"cust-{mode}-idle{i}", args.timeout))
        # Celery sees the lanes setting through the web and worker processes' environment; this process
        # queues the uploads' processing, so it needs the same setting.
        from django.conf import settings

        settings.CAPTAIN = {**settings.CAPTAIN, "LANES": mode != "one-queue"}
        for path in sorted(DOCS.iterdir()):
            document_create_upload(
                assistant=link.assistant,
                file_name=path.name,
                content_type=mimetypes.guess_type(path.name)[0] or "text/markdown",
                data=path.read_bytes(),
            )
        time.sleep(1.0)
        for i in range(args.customers):
            measured["load"].append(_reply_seconds(url, receiver, f"cust-{mode}-load{i}", args.timeout))
    finally:
        for proc in workers:
            stop_process(proc)
    return measured


def _reply_seconds(url: str, receiver: Receiver, contact: str, timeout: float) -> float:
    from helpdesk.channels.api_channel import signed_headers

    body = json.dumps(
        {
            "message_id": contact,
            "contact": {"id": contact, "name": contact},
            "text": f"{contact} where is my ferry?",
        }
    ).encode()
    request = urllib.request.Request(
        url, data=body, headers={"Content-Type": "application/json", **signed_headers("bench-secret", body)}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        assert 200 <= response.status < 300, response.status
    acked = time.monotonic()
    deadline = acked + timeout
    while time.monotonic() < deadline:
        arrivals = [at for who, at in list(receiver.replies) if who == contact]
        if arrivals:
            return arrivals[0] - acked
        time.sleep(0.05)
    return float("inf")


def _print(args: argparse.Namespace, results: dict[str, dict[str, list[float]]]) -> None:
    print(
        f"\nA customer's reply while 12 documents are processed (scripted model: {args.delay:.1f} s per call, "
        f"{args.slots} slots)"
    )
    print(f"{'mode':<10} {'idle p50':>9} {'load p50':>9} {'load max':>9} {'bound':>7}  within bound")
    for mode, m in results.items():
        idle, load = statistics.median(m["idle"]), m["load"]
        bound = idle + args.delay
        ok = max(load) <= bound
        print(
            f"{mode:<10} {idle:>8.1f}s {statistics.median(load):>8.1f}s {max(load):>8.1f}s {bound:>6.1f}s  "
            f"{'yes' if ok else 'no'}"
        )
    print(
        "bound: idle p50 + one background model call; load: each customer writes after the previous one's reply"
    )


if __name__ == "__main__":
    main()
