"""The reply's delay with follow-up suggestions on: asked inside the run (before) or after it, on the background
lane (now).

    python -m bench.suggestions_latency [--delay 1.0] [--customers 5] [--before REF]

Real parts: a redis-server, gunicorn serving the app (the webhook is a real HTTP request), the customer-lane and
background-lane Celery workers as `scripts/run` starts them, and a scripted OpenAI-compatible model on 127.0.0.1
that answers every call after `--delay` seconds (the suggestions' call, known by its response format, with two
questions). The assistant has `suggestions_enabled`. Each customer writes after the previous one was answered;
measured from the webhook's acknowledgement to the API channel's POST of the reply to the customer's callback,
and of the follow-up carrying the buttons when there is one.

`--before REF` (default: the commit before suggestions moved to the background lane) runs the same measurement
with the web and worker processes started from that commit's files (`git archive` into a temporary folder; the
database and its migrations are the same), so both figures come from one run on one machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench.lanes import redis_server_flush
from bench.live_common import worker_bench_django
from bench.webhook_throughput import Receiver, _up

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "242a259"
"""The last commit whose run asked for the suggestions before storing the reply."""


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--delay", type=float, default=1.0, help="the scripted model's time per call (s)")
    parser.add_argument("--customers", type=int, default=5, help="customers measured per version")
    parser.add_argument("--before", default=BEFORE, help="git ref of the code measured as 'before'")
    parser.add_argument("--timeout", type=float, default=120.0, help="per customer, for both messages")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="bench-suggestions-"))
    before_root = workdir / "before"
    before_root.mkdir()
    archive = subprocess.run(["git", "archive", args.before], cwd=ROOT, check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(before_root)], input=archive.stdout, check=True)
    redis_server = worker_bench_django(workdir)
    from tests.support.fake_llm_server import FakeLLMServer, last_user_message, text

    def responder(request: dict[str, Any]) -> Any:
        time.sleep(args.delay)
        response_format = request.get("response_format") or {}
        if response_format.get("json_schema", {}).get("name") == "follow_up_questions":
            return text(json.dumps({"suggestions": ["Can I change the date?", "Is there a discount?"]}))
        marker = last_user_message(request)
        return text(f"Answer for {marker.split(' ', 1)[0]}.")

    model = FakeLLMServer(responder=responder).start()
    receiver = Receiver()
    env = {
        **os.environ,
        "OPENAI_BASE_URL": model.base_url,
        "OPENAI_API_KEY": "bench",
        "CAPTAIN_DEBOUNCE_SECONDS": "0",
        "CAPTAIN_LLM_TIMEOUT": str(max(30.0, args.delay * 20)),
    }
    results: dict[str, list[tuple[float, float]]] = {}
    try:
        for label, root in (("before", before_root), ("after", ROOT)):
            results[label] = _measure(args, label, root, env, receiver, workdir)
            redis_server_flush(redis_server.url)
    finally:
        model.stop()
        receiver.server.shutdown()
        redis_server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    _print(args, results)


def _start(root: Path, env: dict[str, str], workdir: Path, label: str) -> tuple[list[subprocess.Popen], int]:
    """gunicorn and the two lanes' workers, as `scripts/run` starts them, from the files under `root`."""
    from tests.support.servers import free_port, wait_for

    port = free_port()
    procs = [
        subprocess.Popen(
            [
                *(sys.executable, "-m", "gunicorn", "config.asgi:application"),
                *("--worker-class", "uvicorn_worker.UvicornWorker", "--bind", f"127.0.0.1:{port}"),
                *("--workers", "1", "--log-level", "warning"),
            ],
            cwd=root,
            env=env,
        )
    ]
    celery = [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool", "threads", "-l", "INFO"]
    for prefix, name, queues, concurrency in (
        ([], "customer@%h", "helpdesk,captain", 8),
        (["nice", "-n", "10"], "background@%h", "captain_background", 2),
    ):
        log_path = workdir / f"{label}-{name.split('@')[0]}.log"
        argv = [*prefix, *celery, "-n", name, "-Q", queues, "--concurrency", str(concurrency)]
        with log_path.open("w") as log:
            procs.append(subprocess.Popen(argv, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT))
        wait_for(lambda path=log_path: " ready." in path.read_text(errors="replace"), timeout=60, what=name)
    wait_for(lambda: _up(port), timeout=60, what="gunicorn")
    return procs, port


def _measure(
    args: argparse.Namespace, label: str, root: Path, env: dict[str, str], receiver: Receiver, workdir: Path
) -> list[tuple[float, float]]:
    """(seconds to the reply, seconds to the message with the buttons) per customer."""
    from tests.factories import AssistantInboxFactory
    from tests.support.servers import stop_process

    link: Any = AssistantInboxFactory(
        assistant__suggestions_enabled=True, inbox__secret="bench-secret", inbox__callback_url=receiver.url
    )
    procs, port = _start(root, env, workdir, label)
    url = f"http://127.0.0.1:{port}/webhooks/api/{link.inbox.webhook_token}/"
    try:
        return [_arrivals(url, receiver, f"cust-{label}-{i}", args.timeout) for i in range(args.customers)]
    finally:
        for proc in procs:
            stop_process(proc)


def _arrivals(url: str, receiver: Receiver, contact: str, timeout: float) -> tuple[float, float]:
    """Seconds from the webhook's acknowledgement to the reply, and to the buttons (the reply itself when it
    carried them: one POST; else the second POST)."""
    from helpdesk.channels.api_channel import signed_headers

    body = json.dumps(
        {
            "message_id": contact,
            "contact": {"id": contact, "name": contact},
            "text": f"{contact} when is my ferry?",
        }
    ).encode()
    request = urllib.request.Request(
        url, data=body, headers={"Content-Type": "application/json", **signed_headers("bench-secret", body)}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        assert 200 <= response.status < 300, response.status
    acked = time.monotonic()
    deadline = acked + timeout
    first = float("inf")
    while time.monotonic() < deadline:
        arrivals = [at for who, at in list(receiver.replies) if who == contact]
        if arrivals:
            first = arrivals[0] - acked
        if len(arrivals) >= 2:
            return first, arrivals[1] - acked
        if arrivals and _buttons_on_reply(contact):
            return first, first
        time.sleep(0.05)
    return first, float("inf")


def _buttons_on_reply(contact: str) -> bool:
    """Whether the reply carried the buttons itself (before: one POST, nothing follows), from its stored quick
    replies."""
    from helpdesk.models import Message

    row = (
        Message.objects.filter(conversation__contact_inbox__source_id=contact, message_type="outgoing")
        .order_by("id")
        .values_list("quick_replies", flat=True)
        .first()
    )
    return bool(row)


def _print(args: argparse.Namespace, results: dict[str, list[tuple[float, float]]]) -> None:
    print(
        f"\nFollow-up suggestions on: a customer's reply and its buttons (scripted model: {args.delay:.1f} s per "
        f"call; before = {args.before}, after = the working tree)"
    )
    print(f"{'version':<8} {'reply p50':>10} {'reply max':>10} {'buttons p50':>12}")
    for label, measured in results.items():
        replies = [r for r, _ in measured]
        buttons = [b for _, b in measured]
        print(
            f"{label:<8} {statistics.median(replies):>9.2f}s {max(replies):>9.2f}s "
            f"{statistics.median(buttons):>11.2f}s"
        )
    print(
        "reply: webhook acknowledged -> reply POSTed to the customer's callback; buttons: the POST carrying them"
    )


if __name__ == "__main__":
    main()
