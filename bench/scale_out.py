"""Scale-out: replies per second with 1, 2 and 4 customer-lane worker processes on one PostgreSQL and one Redis.

    python -m bench.scale_out [--workers 1,2,4] [--messages 120] [--delay 1.0] [--threads 16] [--kill]

Real parts: a throwaway PostgreSQL server and a redis-server on loopback ports, gunicorn serving the app, Celery
worker processes as a deployment runs them (the customer lane, threads pool), a callback receiver standing in
for the customer's system, and the scripted OpenAI-compatible model answering every call after `--delay` seconds
with no limit on parallel calls (a hosted API). Each worker count gets its own inbox; `--messages` signed
webhooks, one per new conversation, are posted as fast as four client threads go.

Per worker count: replies/s, the p95 reply latency (webhook acknowledged -> reply at the callback), the ideal
(workers x threads / delay, the bound the worker threads set), and the CPU the workers used per reply (from
/proc: user + system time of every worker process), which gives the machine's bound: cores x 1000 / CPU ms.

`--kill`: with the largest worker count, one worker is killed with SIGKILL halfway through; afterwards every
conversation must have exactly one reply and one charge (the sweeper and the conversation locks redo the killed
worker's runs; nothing lost, nothing doubled).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.webhook_throughput import Receiver, _up, percentile

ROOT = Path(__file__).resolve().parents[1]
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Result:
    workers: int
    replies: int = 0
    elapsed: float = 0.0
    latency_s: list[float] = field(default_factory=list)
    cpu_s: float = 0.0
    killed: bool = False
    doubled: int = 0
    missing: int = 0
    stored: int = 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of `pid` and its children still running (the pool's threads are in-process)."""
    total = 0.0
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    return total


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--messages", type=int, default=120)
    parser.add_argument("--delay", type=float, default=1.0)
    parser.add_argument("--threads", type=int, default=16, help="threads per worker process")
    parser.add_argument("--kill", action="store_true", help="kill one worker midway at the largest count")
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT))
    import tests.support.test_environment  # noqa: F401  (production settings with a bench-only key)
    from tests.support import postgres
    from tests.support.fake_llm_server import FakeLLMServer, text
    from tests.support.servers import free_port, start_redis, stop_process, wait_for

    workdir = Path(tempfile.mkdtemp(prefix="bench-scale-out-"))
    workdir.chmod(
        0o755
    )  # PostgreSQL runs as its own user (as root we start it as `postgres`) under this directory
    database_url = postgres.start(workdir / "pg")[0]
    redis_server = start_redis()
    os.environ.update(
        {
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_server.url,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "HELPDESK_VAR_DIR": str(workdir),
            "CAPTAIN_STORE_SPANS": "0",
            "LOG_LEVEL": "WARNING",
            "HELPDESK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1",
        }
    )
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, check=True)
    import django

    django.setup()

    def responder(_request: dict[str, Any]) -> Any:
        time.sleep(args.delay)
        return text("Thanks, here is your answer.")

    model = FakeLLMServer(responder=responder).start()
    receiver = Receiver()
    port = free_port()
    env = {
        **os.environ,
        "OPENAI_BASE_URL": model.base_url,
        "OPENAI_API_KEY": "bench",
        "CAPTAIN_DEBOUNCE_SECONDS": "0",
        "CAPTAIN_MAX_CONCURRENT_RUNS_PER_ACCOUNT": "0",
        "CAPTAIN_LLM_TIMEOUT": "30",
        "CAPTAIN_SWEEP_AFTER_SECONDS": "20",
        "CAPTAIN_SWEEP_INTERVAL_SECONDS": "5",
    }
    web = subprocess.Popen(
        [
            *(sys.executable, "-m", "gunicorn", "config.asgi:application"),
            *("--worker-class", "uvicorn_worker.UvicornWorker", "--bind", f"127.0.0.1:{port}"),
            *("--workers", "2", "--log-level", "warning"),
        ],
        cwd=ROOT,
        env=env,
    )
    beat = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "beat",
            "-l",
            "WARNING",
            "-s",
            str(workdir / "beat"),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    results: list[Result] = []
    try:
        wait_for(lambda: _up(port), timeout=60, what="gunicorn")
        counts = [int(n) for n in args.workers.split(",")]
        for n in counts:
            kill = args.kill and n == max(counts) and n > 1
            results.append(_run(args, n, kill, env, port, receiver, workdir))
    finally:
        stop_process(beat)
        stop_process(web)
        model.stop()
        receiver.server.shutdown()
        redis_server.stop()
        postgres.stop(workdir / "pg")
        shutil.rmtree(workdir, ignore_errors=True)
    _print(args, results)


def _start_workers(n: int, threads: int, env: dict[str, str], workdir: Path) -> list[subprocess.Popen]:
    from tests.support.servers import wait_for

    procs = []
    for i in range(n):
        log_path = workdir / f"worker-{n}-{i}.log"
        argv = [
            *(sys.executable, "-m", "celery", "-A", "config", "worker", "-n", f"customer{i}@%h"),
            *("-Q", "helpdesk,captain", "--pool", "threads", "--concurrency", str(threads), "-l", "INFO"),
            *("--without-gossip", "--without-mingle"),
        ]
        with log_path.open("w") as log:
            procs.append(subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT))
        wait_for(
            lambda path=log_path: " ready." in path.read_text(errors="replace"), timeout=90, what="worker"
        )
    return procs


def _run(
    args: argparse.Namespace,
    n: int,
    kill: bool,
    env: dict[str, str],
    port: int,
    receiver: Receiver,
    workdir: Path,
) -> Result:
    from captain.answering.models import CreditLedgerEntry
    from helpdesk.channels.api_channel import signed_headers
    from helpdesk.models import Message
    from tests.factories import AssistantInboxFactory
    from tests.support.servers import stop_process

    link: Any = AssistantInboxFactory(inbox__secret="bench-secret", inbox__callback_url=receiver.url)
    receiver.reset()
    workers = _start_workers(n, args.threads, env, workdir)
    cpu_before = sum(cpu_seconds(p.pid) for p in workers)
    url = f"http://127.0.0.1:{port}/webhooks/api/{link.inbox.webhook_token}/"
    contacts = [f"w{n}-c{i}" for i in range(args.messages)]
    acked: dict[str, float] = {}
    lock = threading.Lock()
    result = Result(workers=n, killed=kill)

    def post(batch: list[str]) -> None:
        for contact in batch:
            body = json.dumps(
                {"message_id": contact, "contact": {"id": contact, "name": contact}, "text": "hello"}
            ).encode()
            request = urllib.request.Request(
                url,
                data=body,
                headers={"Content-Type": "application/json", **signed_headers("bench-secret", body)},
            )
            with urllib.request.urlopen(request, timeout=30):
                pass
            with lock:
                acked[contact] = time.monotonic()

    started = time.monotonic()
    clients = [threading.Thread(target=post, args=(contacts[i::4],)) for i in range(4)]
    for thread in clients:
        thread.start()
    if kill:
        while len(receiver.replies) < args.messages // 2:
            time.sleep(0.05)
        cpu_before -= cpu_seconds(workers[0].pid)  # its CPU so far is lost with it; count the others' only
        workers[0].send_signal(signal.SIGKILL)
        workers[0].wait()
    for thread in clients:
        thread.join()
    # A killed worker's runs are redone after the sweeper finds them stale; a delivery it had taken waits for
    # the broker's visibility timeout (docs/reliability.md), so it may arrive after this window: reported apart.
    deadline = time.monotonic() + 180
    while len({c for c, _ in receiver.replies}) < args.messages and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = workers[1:] if kill else workers
    result.cpu_s = sum(cpu_seconds(p.pid) for p in alive) - cpu_before
    arrivals: dict[str, float] = {}
    for contact, at in receiver.replies:
        arrivals.setdefault(contact, at)
    result.replies = len(arrivals)
    result.elapsed = max(arrivals.values(), default=time.monotonic()) - started
    result.latency_s = [arrivals[c] - acked[c] for c in arrivals if c in acked]
    outgoing = Message.objects.filter(inbox=link.inbox, message_type="outgoing", private=False)
    per_conversation = [outgoing.filter(conversation__contact_inbox__source_id=c).count() for c in contacts]
    charges = CreditLedgerEntry.objects.filter(message__inbox=link.inbox).count()
    result.doubled = sum(1 for k in per_conversation if k > 1) + max(0, charges - args.messages)
    result.missing = sum(1 for k in per_conversation if k == 0)
    result.stored = sum(1 for k in per_conversation if k > 0)
    for proc in alive:
        stop_process(proc)
    return result


def _print(args: argparse.Namespace, results: list[Result]) -> None:
    cores = os.cpu_count() or 1
    print(
        f"\nScale-out: {args.messages} new conversations per worker count, scripted model {args.delay:.1f} s per "
        f"call (no slot limit), {args.threads} threads per worker, one PostgreSQL, one Redis, {cores} cores"
    )
    print(
        f"{'workers':>7} {'replies':>7} {'rep/s':>6} {'x of 1':>6} {'ideal':>6} {'p95 s':>6} {'CPU ms/reply':>12} "
        f"{'CPU bound rep/s':>15}  stored  lost/doubled"
    )
    base = None
    for r in results:
        rate = r.replies / r.elapsed if r.elapsed > 0 else 0.0
        base = base or rate
        cpu_ms = 1000 * r.cpu_s / r.replies if r.replies else float("nan")
        ideal = r.workers * args.threads / args.delay
        note = " (one worker killed midway)" if r.killed else ""
        print(
            f"{r.workers:>7} {r.replies:>7} {rate:>6.1f} {rate / base:>6.2f} {ideal:>6.0f} "
            f"{percentile(r.latency_s, 0.95):>6.1f} {cpu_ms:>12.0f} {cores * 1000 / cpu_ms:>15.1f}  "
            f"{r.stored:>6}  {r.missing}/{r.doubled}{note}"
        )
    print(
        "replies: delivered to the callback within the window; stored: conversations with a reply in the database\n"
        "CPU ms/reply: the workers' CPU only (web, PostgreSQL and Redis use the same cores); median latency "
        + ", ".join(f"{r.workers}: {statistics.median(r.latency_s):.1f} s" for r in results if r.latency_s)
    )


if __name__ == "__main__":
    main()
