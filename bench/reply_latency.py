"""The demo's replies on the bundled model: seconds, model calls and prompt tokens read per reply.

    python bench/reply_latency.py [--models 0.5b,1.5b] [--rounds 2] [--root DIR] [--label NAME]

For each model: a freshly started server (`captain.local_llm`, two slots, as `scripts/run` starts it), a fresh
database with the demo account (`captain_demo_seed`), and the README's three demo messages, each from a new
customer, through `message_ingest` (what the webhook calls) with the worker's path run in this process. Round 1
is the first contact after the server started; later rounds ask the same three things in other words (as new
customers) with the server's prompt cache as the earlier rounds left it.

Between the product and the model sits a recording proxy on 127.0.0.1: for every model call it notes the prompt
tokens and how many of them the server took from its prompt cache (`prompt_tokens_details.cached_tokens`), so
the figures do not depend on the product's own accounting and any version of the code can be measured the same
way: `--root DIR` runs the product from another checkout (e.g. `git worktree add /tmp/before <commit>`), so two
versions are measured one after the other on the same machine. The proxy reads each answer whole before passing
it on (a streamed answer arrives at once): seconds include the full generation.

Prints per model and round: p50 seconds per reply, model calls per reply, prompt tokens per reply and the share
read again (not from the cache).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

DEMO_MESSAGES = [
    "Can I return an item I bought last week?",
    "Please let me talk to a person",
    "We need an invoice with our VAT number",
]
# Later rounds: the same three needs in other words (a repeated message would be served whole from the cache).
LATER_MESSAGES = [
    "I'd like to send back the headphones I ordered, how does that work?",
    "Can a human agent help me, please?",
    "Please send me an invoice for my last order, with our company's VAT number on it",
]


class RecordingProxy:
    """Forwards POSTs to the model server and records (prompt tokens, cached tokens) of each answer."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.calls: list[tuple[int, int]] = []
        # Every exchange (request body, usage, llama.cpp's own `timings`), for `--dump`: what was sent and read.
        self.log: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                started = time.monotonic()
                request = urllib.request.Request(
                    proxy.upstream + self.path.removeprefix("/v1"),
                    data=body,
                    headers={"Content-Type": "application/json"},
                )
                try:
                    with urllib.request.urlopen(request, timeout=600) as upstream:
                        status, content_type, payload = (
                            upstream.status,
                            upstream.headers["Content-Type"],
                            upstream.read(),
                        )
                except urllib.error.HTTPError as exc:  # the server's own refusal, passed on as it is
                    status, content_type, payload = exc.code, exc.headers["Content-Type"], exc.read()
                except OSError:
                    # The server was stopped under a call (the end of a start in bench.first_reply).
                    self.send_error(502)
                    return
                proxy._record(body, payload, time.monotonic() - started)
                self.send_response(status)
                self.send_header("Content-Type", content_type or "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                with urllib.request.urlopen(proxy.upstream + self.path.removeprefix("/v1"), timeout=30) as up:
                    payload = up.read()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def _record(self, body: bytes, payload: bytes, seconds: float) -> None:
        usage: dict[str, Any] | None = None
        timings: dict[str, Any] | None = None
        text = payload.decode("utf-8", errors="replace")
        candidates = (
            [text]
            if text.lstrip().startswith("{")
            else [
                line.removeprefix("data:").strip() for line in text.splitlines() if line.startswith("data:")
            ]
        )
        for candidate in candidates:
            try:
                parsed = json.loads(candidate)
            except ValueError:
                continue
            if isinstance(parsed, dict) and isinstance(parsed.get("usage"), dict):
                usage = parsed["usage"]
            if isinstance(parsed, dict) and isinstance(parsed.get("timings"), dict):
                timings = parsed["timings"]
        with self._lock:
            self.log.append(
                {
                    "at": time.time() - seconds,
                    "seconds": round(seconds, 2),
                    "usage": usage,
                    "timings": timings,
                    "request": _parsed(body),
                }
            )
        if usage is not None:
            cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
            with self._lock:
                self.calls.append((int(usage.get("prompt_tokens") or 0), int(cached)))

    def take(self) -> list[tuple[int, int]]:
        with self._lock:
            calls, self.calls = self.calls, []
        return calls


def _parsed(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--models", default="0.5b,1.5b")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--root", default=str(Path(__file__).resolve().parents[1]), help="the checkout to run"
    )
    parser.add_argument("--label", default="", help="a name for this checkout in the output")
    parser.add_argument(
        "--warm",
        action="store_true",
        help="before round 1, run the prompt warm-up a starting worker queues (captain.answering.services.warmup)",
    )
    parser.add_argument(
        "--first",
        type=int,
        default=0,
        help="instead of the rounds: the demo's first message N times, each from a new customer (fresh conversations)",
    )
    parser.add_argument(
        "--dump",
        default="",
        help="write every model exchange (request, usage, server timings) to FILE-<model>.jsonl",
    )
    args = parser.parse_args()

    root = Path(args.root).resolve()
    own_root = Path(__file__).resolve().parents[1]
    os.chdir(root)
    sys.path.insert(0, str(root))
    workdir = Path(tempfile.mkdtemp(prefix="bench-reply-latency-"))
    os.environ.update(
        {
            "DATABASE_URL": f"sqlite:///{workdir / 'bench.sqlite3'}",
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DJANGO_DEBUG": "1",
            "HELPDESK_VAR_DIR": str(workdir),
            "CAPTAIN_BUNDLED_MODEL": "1",
            "CAPTAIN_DEBOUNCE_SECONDS": "0",
            "CAPTAIN_MODEL_DIR": os.environ.get("CAPTAIN_MODEL_DIR", str(own_root / "var" / "models")),
            "LOG_LEVEL": "WARNING",
            "CELERY_TASK_ALWAYS_EAGER": "1",
        }
    )
    from tests.support.servers import start_redis

    redis_server = start_redis()
    os.environ["REDIS_URL"] = redis_server.url
    try:
        rows = [
            row
            for model in args.models.split(",")
            for row in _measure_model(model, args.rounds, workdir, args.warm, args.dump, args.first)
        ]
    finally:
        redis_server.stop()
    _print(args.label or root.name, rows)


def _measure_model(
    model: str, rounds: int, workdir: Path, warm: bool, dump: str = "", first: int = 0
) -> list[dict[str, Any]]:
    from captain.local_llm import start_local_llm

    llm = start_local_llm(port=0, model=model, log_path=workdir / f"llm-{model}.log")
    proxy = RecordingProxy(llm.base_url)
    os.environ.update(
        {"OPENAI_BASE_URL": proxy.base_url, "OPENAI_API_KEY": "local", "CAPTAIN_MODEL": llm.model}
    )
    try:
        return _rounds(model, rounds, proxy, warm, first)
    finally:
        if dump:
            with open(f"{dump}-{model}.jsonl", "w") as out:
                out.writelines(json.dumps(entry) + "\n" for entry in proxy.log)
        proxy.server.shutdown()
        llm.stop()


def _rounds(
    model: str, rounds: int, proxy: RecordingProxy, warm: bool, first: int = 0
) -> list[dict[str, Any]]:
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.test.utils import override_settings

    from bench.knowledge.harness import isolated_database
    from captain.knowledge.services.knowledge_search import knowledge_cache_clear

    knowledge_cache_clear()  # a fresh database reuses ids: nothing loaded for the previous model may answer
    captain = {
        **settings.CAPTAIN,
        "OPENAI_BASE_URL": proxy.base_url,
        "DEFAULT_MODEL": os.environ["CAPTAIN_MODEL"],
    }
    rows = []
    with isolated_database(), override_settings(CAPTAIN=captain):
        call_command("captain_demo_seed", verbosity=0)
        if warm:
            from captain.answering.services.warmup import prompt_prefixes_warm

            started = time.monotonic()
            prompt_prefixes_warm()
            print(
                f"{model}: prompt warm-up took {time.monotonic() - started:.1f} s ({len(proxy.take())} call)",
                flush=True,
            )
        plan = (
            [("first", [DEMO_MESSAGES[0]] * first)]
            if first
            else [(str(n), DEMO_MESSAGES if n == 1 else LATER_MESSAGES) for n in range(1, rounds + 1)]
        )
        for round_no, texts in plan:
            seconds, calls, prompt, read = [], [], [], []
            for i, text in enumerate(texts):
                proxy.take()
                started = time.monotonic()
                _ask(f"{model}-r{round_no}-{i}", text)
                seconds.append(time.monotonic() - started)
                made = proxy.take()
                calls.append(len(made))
                prompt.append(sum(p for p, _ in made))
                read.append(sum(p - c for p, c in made))
            rows.append(
                {
                    "model": model,
                    "round": round_no,
                    "p50_s": statistics.median(seconds),
                    "max_s": max(seconds),
                    "each_s": seconds,
                    "calls": sum(calls) / len(calls),
                    "prompt": sum(prompt) / len(prompt),
                    "read": sum(read) / len(read),
                }
            )
    return rows


def _ask(source_id: str, text: str) -> None:
    from helpdesk.channels.base import InboundContact, InboundMessage
    from helpdesk.models import Inbox
    from helpdesk.services.messages import message_ingest

    inbox = Inbox.objects.get(name="Website API")
    message_ingest(
        inbox=inbox,
        inbound=InboundMessage(
            provider_message_id=source_id, contact=InboundContact(source_id=source_id, name="Demo"), text=text
        ),
    )


def _print(label: str, rows: list[dict[str, Any]]) -> None:
    print(f"\nThe README's demo messages on the bundled model ({label})")
    print(
        f"{'model':<6} {'round':>5} {'p50 s':>7} {'max s':>7} {'calls':>6} {'prompt tok':>11} {'read again':>11}"
    )
    for r in rows:
        share = r["read"] / r["prompt"] if r["prompt"] else 0.0
        print(
            f"{r['model']:<6} {r['round']:>5} {r['p50_s']:>7.1f} {r['max_s']:>7.1f} {r['calls']:>6.1f} "
            f"{r['prompt']:>11.0f} {r['read']:>6.0f} ({share:>3.0%})  each: "
            + " ".join(f"{s:.1f}" for s in r["each_s"])
        )
    print(
        "per reply, averaged over the three messages; 'read again': prompt tokens not served from the cache"
    )


if __name__ == "__main__":
    main()
