"""Webhook acknowledgement latency, reply throughput and end-to-end overhead, per Celery pool, in one run.

    python -m bench.webhook_throughput [--webhooks 200] [--conversations 50] [--delay 1.0] [--clients 4]
                                       [--pools prefork:4,threads:16,gevent:64] [--database-url URL]

Real parts only: a redis-server, gunicorn serving the Django app on a free loopback port (so the webhook's
acknowledgement latency is a real HTTP round trip), Celery worker processes with the pool under test, the
scripted OpenAI-compatible model answering every call after `--delay` seconds, and a callback receiver standing
in for the customer's system (the API channel POSTs each reply there). For each pool, `--webhooks` signed
webhooks for `--conversations` conversations are posted from `--clients` threads as fast as they go, and we
report:

- webhook ack latency p50/p95/p99 while the workers are busy (goal: p95 < 250 ms on a 2-core machine);
- replies per second against the ideal `conversations / delay` (each conversation's runs are serialised, so
  that is the ceiling whatever the pool);
- end-to-end overhead above the model's own time, p50/p95: callback arrival minus the acknowledgement of the
  newest customer message the reply answers, minus `--delay` (queueing behind the conversation's previous run
  is included: it is what a customer waits for).

It prints the worker's CPU time per reply (its processes' user + system time from the first webhook to the last
reply, divided by the replies), and each worker's resident memory (main + pool processes, from /proc) before any run, once a tenth
of the runs is done (caches warm), and after all of them; `--webhooks 1000 --conversations 1000` makes that
"after 1,000 runs". It runs with DEBUG off, as in production (a bench-only key, plain HTTP on loopback): with DEBUG on,
Django keeps the last 9,000 queries of every database connection (one per worker thread).

The debounce is 0 here (it adds its window by design) and the per-account concurrent-run cap is off (all
conversations belong to one account; the cap would measure itself). SQLite by default (a file in a temporary
directory); `--database-url postgres://...` for PostgreSQL (an empty database you own: it is migrated).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import defaultdict
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from bench.live_common import worker_bench_django

ROOT = Path(__file__).resolve().parents[1]


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Receiver:
    """Records (contact id, arrival time) for every reply the API channel POSTs."""

    def __init__(self) -> None:
        self.replies: list[tuple[str, float]] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                arrived = time.monotonic()
                with receiver._lock:
                    receiver.replies.append((json.loads(body)["contact_id"], arrived))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/callback"

    def reset(self) -> None:
        with self._lock:
            self.replies.clear()


@dataclass
class PoolResult:
    pool: str
    concurrency: int
    web: str = ""
    ack_ms: list[float] = field(default_factory=list)
    non_2xx: int = 0
    replies: int = 0
    elapsed: float = 0.0
    overhead_s: list[float] = field(default_factory=list)
    unanswered: int = 0
    runs: int = 0
    rss_before: dict[int, float] = field(default_factory=dict)
    """Resident memory (MiB) of the worker's processes (main + pool) once it is ready, before any run."""
    rss_warm: dict[int, float] = field(default_factory=dict)
    """The same once the first tenth of the runs (at least 50) was done: imports and caches are warm."""
    runs_warm: int = 0
    rss_after: dict[int, float] = field(default_factory=dict)
    """The same after every webhook was answered."""
    stages: dict[str, list[float]] = field(default_factory=dict)
    """Where a reply's time went, per run (seconds, or a count for `llm_calls`): see `run_stages`."""
    worker_cpu_s: float = 0.0
    """CPU seconds the worker's processes used from the first webhook to the last reply (see `worker_cpu`)."""


def run_stages(runs: Any) -> dict[str, list[float]]:
    """Per run, from the database: `queued` (the trigger message stored -> the run started), `run` (the run's own
    duration, model calls included), and `llm_calls`. The rest of a reply's time is delivery (run saved ->
    callback received). Tells a pool's capacity (queued grows) from the run itself being slow (run grows)."""
    stages: dict[str, list[float]] = {"queued": [], "run": [], "llm_calls": []}
    for created, duration_ms, calls, stored in runs.values_list(
        "created_at", "duration_ms", "llm_calls", "trigger_message__created_at"
    ):
        stages["run"].append(duration_ms / 1000)
        stages["llm_calls"].append(float(calls))
        if stored is not None:
            stages["queued"].append((created - stored).total_seconds() - duration_ms / 1000)
    return stages


def worker_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a Celery worker so far: its main process with the pool processes it reaped
    (cutime, cstime) and those still running (Linux /proc). Divided by the replies, what one reply costs the
    worker: the run, the delivery task, Celery's own work."""
    tick = os.sysconf("SC_CLK_TCK")

    def fields(p: int) -> list[str]:
        # The command name (field 2) may hold spaces: split after its closing parenthesis.
        return Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()

    try:
        own = fields(pid)
        children = [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return 0.0
    total = sum(int(v) for v in own[11:15])  # utime, stime, cutime, cstime
    for child in children:
        try:
            total += sum(int(v) for v in fields(child)[11:13])
        except OSError:
            continue
    return total / tick


def worker_rss(pid: int) -> dict[int, float]:
    """VmRSS in MiB of a Celery worker's main process and its pool processes (Linux /proc)."""
    try:
        children = [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        children = []
    rss: dict[int, float] = {}
    for p in [pid, *children]:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    rss[p] = int(line.split()[1]) / 1024
        except OSError:
            continue
    return rss


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--webhooks", type=int, default=200)
    parser.add_argument("--conversations", type=int, default=50)
    parser.add_argument("--delay", type=float, default=1.0, help="the scripted model's answer time (s)")
    parser.add_argument("--clients", type=int, default=4, help="threads posting webhooks")
    parser.add_argument("--pools", default="prefork:4,threads:16,gevent:64", help="pool:concurrency,...")
    parser.add_argument("--web-workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument(
        "--web",
        default="asgi",
        help="web servers to compare, one after the other: asgi (scripts/run's), gthread",
    )
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--timeout", type=float, default=180.0, help="per pool, for all replies to arrive")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="bench-webhooks-"))
    redis_server = worker_bench_django(workdir, database_url=args.database_url)
    from captain.answering.models import Run
    from helpdesk.models import Message
    from tests.factories import AssistantInboxFactory
    from tests.support.fake_llm_server import FakeLLMServer, last_user_message, text
    from tests.support.servers import free_port, start_celery_worker, stop_process, wait_for

    model_calls: dict[str, list[tuple[str, float]]] = defaultdict(list)  # contact -> (newest msg id, start)
    calls_lock = threading.Lock()

    def responder(request: dict[str, Any]) -> Any:
        started = time.monotonic()
        marker = last_user_message(request)  # "<contact> <message key>"
        contact, key = marker.split(" ", 1)
        time.sleep(args.delay)
        with calls_lock:
            model_calls[contact].append((key, started))
        return text(f"Answer for {contact}.")

    model = FakeLLMServer(responder=responder).start()
    receiver = Receiver()
    port = free_port()
    overrides = {
        "OPENAI_BASE_URL": model.base_url,
        "OPENAI_API_KEY": "bench",
        "CAPTAIN_DEBOUNCE_SECONDS": "0",
        "CAPTAIN_MAX_CONCURRENT_RUNS_PER_ACCOUNT": "0",
        "CAPTAIN_LLM_TIMEOUT": str(max(10.0, args.delay * 5)),
    }
    common_env = {**os.environ, **overrides}

    def start_web(kind: str) -> subprocess.Popen:
        # gthread: the WSGI app in threads (what scripts/run ran before the dashboard's event streams); asgi:
        # uvicorn's worker on config.asgi (what it runs now), where each request's sync code gets its own thread.
        server = (
            ["config.wsgi:application", "--worker-class", "gthread", "--threads", "4"]
            if kind == "gthread"
            else ["config.asgi:application", "--worker-class", "uvicorn_worker.UvicornWorker"]
        )
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                *server,
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                str(args.web_workers),
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            env=common_env,
        )

    results: list[PoolResult] = []
    web: subprocess.Popen | None = None
    try:
        for web_kind in args.web.split(","):
            web = start_web(web_kind)
            wait_for(lambda: _up(port), timeout=30, what="gunicorn")
            for spec in args.pools.split(","):
                pool, _, concurrency = spec.partition(":")
                if pool == "gevent" and not _importable("gevent"):
                    print(f"skipping {pool}: gevent is not installed")
                    continue
                link = AssistantInboxFactory(inbox__secret="bench-secret", inbox__callback_url=receiver.url)
                receiver.reset()
                with calls_lock:
                    model_calls.clear()
                worker = start_celery_worker(
                    env=overrides,
                    log_path=workdir / f"worker-{pool}.log",
                    concurrency=int(concurrency or 4),
                    pool=pool,
                )
                try:
                    rss_before = worker_rss(worker.proc.pid)
                    runs = Run.objects.filter(conversation__inbox=link.inbox)
                    warm: dict[str, Any] = {}
                    finished = threading.Event()

                    def sample_when_warm(
                        pid: int = worker.proc.pid, runs=runs, warm=warm, finished=finished
                    ) -> None:
                        target = max(50, args.webhooks // 10)
                        while not finished.wait(0.2):
                            done = runs.count()
                            if done >= target:
                                warm.update(rss=worker_rss(pid), runs=done)
                                return

                    sampler = threading.Thread(target=sample_when_warm, daemon=True)
                    sampler.start()
                    cpu_before = worker_cpu(worker.proc.pid)
                    result = _run_pool(
                        args, pool, int(concurrency or 4), port, link, receiver, model_calls, Message
                    )
                    result.worker_cpu_s = worker_cpu(worker.proc.pid) - cpu_before
                    finished.set()
                    sampler.join()
                    result.rss_before, result.rss_after = rss_before, worker_rss(worker.proc.pid)
                    result.rss_warm, result.runs_warm = warm.get("rss", {}), warm.get("runs", 0)
                    result.runs = runs.count()
                    result.stages = run_stages(runs)
                    result.web = web_kind
                    results.append(result)
                finally:
                    worker.stop()
            stop_process(web)
            web = None
        _print(args, results)
    finally:
        if web is not None:
            stop_process(web)
        model.stop()
        receiver.server.shutdown()
        redis_server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def _run_pool(args, pool, concurrency, port, link, receiver, model_calls, message_model) -> PoolResult:
    from helpdesk.channels.api_channel import signed_headers

    result = PoolResult(pool=pool, concurrency=concurrency)
    contacts = [f"{pool}-c{i}" for i in range(args.conversations)]
    plan = [(contacts[i % len(contacts)], f"{pool}-m{i}") for i in range(args.webhooks)]
    random.Random(7).shuffle(plan)
    acked: dict[str, float] = {}
    lock = threading.Lock()
    url = f"http://127.0.0.1:{port}/webhooks/api/{link.inbox.webhook_token}/"

    def client(items: list[tuple[str, str]]) -> None:
        for contact, key in items:
            body = json.dumps(
                {"message_id": key, "contact": {"id": contact, "name": contact}, "text": f"{contact} {key}"}
            ).encode()
            request = urllib.request.Request(
                url,
                data=body,
                headers={"Content-Type": "application/json", **signed_headers("bench-secret", body)},
            )
            started = time.monotonic()
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    ok = 200 <= response.status < 300
            except Exception:
                ok = False
            done = time.monotonic()
            with lock:
                result.ack_ms.append((done - started) * 1000)
                acked[key] = done
                if not ok:
                    result.non_2xx += 1

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(plan[i :: args.clients],)) for i in range(args.clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    inbox_messages = message_model.objects.filter(inbox=link.inbox, message_type="incoming")
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        pending = inbox_messages.filter(reply_job__status="pending").count()
        queued = message_model.objects.filter(
            inbox=link.inbox, message_type="outgoing", delivery__status="queued"
        )
        if pending == 0 and not queued.exists():
            break
        time.sleep(0.2)
    result.unanswered = inbox_messages.filter(reply_job__status="pending").count()
    replies = sorted(receiver.replies, key=lambda r: r[1])
    result.replies = len(replies)
    result.elapsed = (replies[-1][1] if replies else time.monotonic()) - started
    # n-th reply of a contact <-> n-th model call of that contact (its runs are serialised, one call each).
    by_contact: dict[str, list[float]] = defaultdict(list)
    for contact, arrived in replies:
        by_contact[contact].append(arrived)
    for contact, arrivals in by_contact.items():
        for (newest_key, _), arrived in zip(model_calls.get(contact, []), arrivals, strict=False):
            if newest_key in acked:
                result.overhead_s.append(arrived - acked[newest_key] - args.delay)
    return result


def _print(args, results: list[PoolResult]) -> None:
    ideal = args.conversations / args.delay
    print(
        f"\nwebhook throughput: {args.webhooks} webhooks for {args.conversations} conversations, model delay "
        f"{args.delay:.1f} s, {args.clients} client threads, gunicorn {args.web_workers} workers "
        f"(gthread: 4 threads each; asgi: uvicorn), cpu count {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}"
    )
    header = (
        f"{'web':>7} {'pool':>8} {'conc':>4} | {'ack p50':>8} {'p95':>7} {'p99':>7} {'non2xx':>6} | {'replies':>7} "
        f"{'rep/s':>6} {'ideal':>6} {'ratio':>6} | {'e2e over p50':>12} {'p95':>6} | unanswered"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        rate = r.replies / r.elapsed if r.elapsed > 0 else 0.0
        print(
            f"{r.web:>7} {r.pool:>8} {r.concurrency:>4} | {percentile(r.ack_ms, 0.5):7.1f}m {percentile(r.ack_ms, 0.95):6.1f}m "
            f"{percentile(r.ack_ms, 0.99):6.1f}m {r.non_2xx:>6} | {r.replies:>7} {rate:6.2f} {ideal:6.1f} "
            f"{rate / ideal:6.2f} | {percentile(r.overhead_s, 0.5):11.2f}s {percentile(r.overhead_s, 0.95):5.2f}s"
            f" | {r.unanswered}"
        )
    if results:
        print(
            f"median ack over all pools: {statistics.median([m for r in results for m in r.ack_ms]):.1f} ms"
        )
    for r in results:
        q, run, calls = (r.stages.get(k, []) for k in ("queued", "run", "llm_calls"))
        print(
            f"stages {r.pool}:{r.concurrency}: queued p50 {percentile(q, 0.5):.2f} s p95 {percentile(q, 0.95):.2f} s; "
            f"run p50 {percentile(run, 0.5):.2f} s p95 {percentile(run, 0.95):.2f} s; "
            f"model calls per run {statistics.mean(calls) if calls else float('nan'):.2f}"
        )
    for r in results:
        per_reply = r.worker_cpu_s * 1000 / r.replies if r.replies else float("nan")
        print(
            f"worker CPU {r.pool}:{r.concurrency}: {r.worker_cpu_s:.1f} s for {r.replies} replies, "
            f"{per_reply:.1f} ms per reply (run, delivery and Celery's own work)"
        )
    for r in results:
        # Prefork pool processes share the parent's pages copy-on-write, so the sum overstates real use; the
        # largest single process is the other bound.
        print(
            f"worker RSS {r.pool}: {_mib(r.rss_before)} before any run; {_mib(r.rss_warm)} after {r.runs_warm} "
            f"runs; {_mib(r.rss_after)} after {r.runs} runs"
        )


def _mib(rss: dict[int, float]) -> str:
    return f"{sum(rss.values()):.1f} MiB (largest of {len(rss)}: {max(rss.values(), default=0):.1f})"


def _up(port: int) -> bool:
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/admin/login/", timeout=1)
        return True
    except urllib.error.HTTPError:
        return True
    except Exception:
        return False


def _importable(module: str) -> bool:
    try:
        __import__(module)
        return True
    except ImportError:
        return False


if __name__ == "__main__":
    main()
