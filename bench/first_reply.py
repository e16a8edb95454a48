"""The demo's first reply after a fresh start, as a newcomer gets it: seconds from the question to the reply.

    python -m bench.first_reply [--models 0.5b,1.5b] [--starts 3] [--before DIR]

Each start is fresh: a new model server (`captain.local_llm`, two slots, as `scripts/run` starts it, behind the
recording proxy of `bench/reply_latency.py`), then the checkout's own `scripts/supervisor.py` (what `scripts/run`
runs after its set-up) with a throwaway var directory and free loopback ports: migrations, the demo seed, both
lanes' workers, beat and the web server. Once it prints its ready line, `manage.py captain_demo_chat` asks the
README's first question ("Can I return an item I bought last week?") and waits for the reply at the demo's
callback, as the README's second terminal does. Everything started is stopped by PID before the next start.

`--before DIR` measures another checkout the same way (e.g. `git worktree add /tmp/before <commit>`), the two
alternating start by start so a machine whose load changes treats both alike. Both run on this checkout's
virtualenv and model server code.

Prints per model and checkout: seconds from the start to the ready line, seconds from running the command to its
end (each start and the p50; the command's own Python and Django start-up included, as a newcomer waits for it)
and from its webhook POST to the reply stored and delivered (what a customer waits), split into the time before
the reply's first model call (debounce, queue, routing) and in the model, and the prompt tokens of the reply's
model calls with the share read again (not served from the server's prompt cache), from the server's own usage
figures.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "Can I return an item I bought last week?"
READY_MARK = "==> Captain Helpdesk on"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def clean_env(**extra: str) -> dict[str, str]:
    """This shell's environment without what would point the product elsewhere."""
    drop = ("OPENAI_", "CAPTAIN_", "HELPDESK_", "DJANGO_", "CELERY_", "DATABASE_URL", "REDIS_URL", "DEMO_")
    return {**{k: v for k, v in os.environ.items() if not k.startswith(drop)}, **extra}


@contextlib.contextmanager
def supervised(root: Path, env: dict[str, str], out_path: Path, timeout: float) -> Iterator[float]:
    """`root`'s `scripts/supervisor.py` (what `scripts/run` runs after its set-up), its output in `out_path`;
    yields the seconds it took to print its ready line and stops it, by PID, on leaving."""
    began = time.monotonic()
    with out_path.open("wb") as out:
        run = subprocess.Popen(
            [str(ROOT / ".venv" / "bin" / "python"), str(root / "scripts" / "supervisor.py")],
            cwd=root,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        while READY_MARK not in out_path.read_text(errors="replace"):
            if run.poll() is not None or time.monotonic() - began > timeout:
                raise RuntimeError(f"{root}: not ready; see {out_path}")
            time.sleep(0.2)
        yield time.monotonic() - began
    finally:
        if run.poll() is None:
            os.kill(run.pid, signal.SIGTERM)  # the supervisor stops what it started, by PID
        try:
            run.wait(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)


def message_times(database: Path) -> tuple[float, float]:
    """When the demo's customer message and the AI's reply were stored (epoch seconds), from the product's own
    database: the customer's side of the wait, without the command's start-up or its polling."""
    with sqlite3.connect(database) as db:
        asked_id, asked_at = db.execute(
            "SELECT id, created_at FROM helpdesk_message WHERE sender_type = 'contact' ORDER BY id DESC LIMIT 1"
        ).fetchone()
        (answered_at,) = db.execute(
            "SELECT created_at FROM helpdesk_message WHERE sender_type = 'assistant' AND id > ? ORDER BY id "
            "LIMIT 1",
            (asked_id,),
        ).fetchone()

    def stamp(at: str) -> float:
        return datetime.fromisoformat(at).replace(tzinfo=UTC).timestamp()

    return stamp(asked_at), stamp(answered_at)


def one_start(root: Path, model: str, timeout: float) -> dict[str, Any]:
    """A fresh model server and a fresh product from `root`; the first question's seconds and prompt tokens."""
    sys.path.insert(0, str(ROOT))
    from bench.reply_latency import RecordingProxy
    from captain.local_llm import start_local_llm

    work = Path(tempfile.mkdtemp(prefix="bench-first-reply-"))
    llm = start_local_llm(port=0, model=model, log_path=work / "llm.log")
    proxy = RecordingProxy(llm.base_url)
    port, redis_port, callback_port = free_port(), free_port(), free_port()
    env = clean_env(
        HELPDESK_VAR_DIR=str(work / "var"),
        PORT=str(port),
        REDIS_PORT=str(redis_port),
        DEMO_CALLBACK_PORT=str(callback_port),
        OPENAI_BASE_URL=proxy.base_url,
        OPENAI_API_KEY="local",
        CAPTAIN_MODEL=llm.model,
        # What scripts/run sets when it starts the bundled model itself (its timeouts and model gate).
        CAPTAIN_BUNDLED_MODEL="1",
        PYTHONUNBUFFERED="1",
    )
    python = str(ROOT / ".venv" / "bin" / "python")
    try:
        with supervised(root, env, work / "run.out", timeout) as ready:
            asked_at = time.time()
            started = time.monotonic()
            chat = subprocess.run(
                [python, "manage.py", "captain_demo_chat", QUESTION],
                cwd=root,
                env={
                    **env,
                    "DJANGO_DEBUG": "1",
                    "DJANGO_SETTINGS_MODULE": "config.settings",
                    "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
                    "HELPDESK_PUBLIC_URL": f"http://127.0.0.1:{port}",
                },
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
            seconds = time.monotonic() - started
            if chat.returncode != 0:
                raise RuntimeError(f"captain_demo_chat failed: {chat.stdout}{chat.stderr}")
            # The reply's own calls (they carry the question); background calls at the same time are not counted.
            calls = [
                e
                for e in proxy.log
                if e["at"] >= asked_at - 0.5 and QUESTION in str((e["request"] or {}).get("messages"))
            ]
            # Other calls (the background lane's drafts) that ran while the reply waited: they share the two cores.
            ended = time.time()
            beside = sum(
                1
                for e in proxy.log
                if e not in calls and e["at"] < ended and e["at"] + e["seconds"] > asked_at
            )
            prompt = sum(int((e["usage"] or {}).get("prompt_tokens") or 0) for e in calls)
            output = sum(int((e["usage"] or {}).get("completion_tokens") or 0) for e in calls)
            # Where the seconds went: the command's own start-up (Python and Django) comes before its POST; its
            # "done in" counts from the POST to the reply stored and delivered (polled every 0.3 s).
            done = re.search(r"^done in ([0-9.]+) s", chat.stdout, re.M)
            posted = float(done.group(1)) if done else float("nan")
            in_model = sum(float(e["seconds"]) for e in calls)
            first_call = min((float(e["at"]) for e in calls), default=float("nan"))
            stored, answered = message_times(work / "var" / "db.sqlite3")
            cached = sum(
                int(((e["usage"] or {}).get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
                for e in calls
            )
            return {
                "ready": ready,
                "seconds": seconds,
                "calls": len(calls),
                "prompt": prompt,
                "read": prompt - cached,
                "beside": beside,
                "output": output,
                "posted": posted,
                "stored_to_reply": answered - stored,
                "model": in_model,
                # From the customer's message stored to the reply's first model call (debounce, queue, routing).
                "before_model": first_call - stored,
            }
    finally:
        proxy.server.shutdown()
        llm.stop()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--models", default="0.5b,1.5b")
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--before", default="", help="another checkout to measure the same way")
    parser.add_argument("--timeout", type=float, default=900.0)
    args = parser.parse_args()
    roots = ([("before", Path(args.before).resolve())] if args.before else []) + [("after", ROOT)]
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for model in args.models.split(","):
        for n in range(args.starts):
            for label, root in roots:
                row = one_start(root, model, args.timeout)
                results.setdefault((model, label), []).append(row)
                print(
                    f"{model} {label} start {n + 1}: ready {row['ready']:.1f} s, first reply {row['seconds']:.1f} s, "
                    f"{row['calls']} call(s), {row['prompt']} prompt tokens, {row['read']} read again, "
                    f"{row['beside']} other call(s) meanwhile; from the POST {row['posted']:.1f} s, from the "
                    f"message stored to the reply stored {row['stored_to_reply']:.1f} s (before the model "
                    f"{row['before_model']:.1f} s, model {row['model']:.1f} s for "
                    f"{row['output']} output tokens)",
                    flush=True,
                )
    print(
        f"\nThe demo's first question after a fresh start ({args.starts} starts each; load {os.getloadavg()[0]:.1f})"
    )
    print(
        f"{'model':<6} {'code':<7} {'ready s':>8} {'reply p50 s':>12}  each s            {'read again':>10} "
        f"{'from POST p50 s':>16} {'stored->reply p50 s':>20}"
    )
    for (model, label), rows in results.items():
        each = " ".join(f"{r['seconds']:.1f}" for r in rows)
        read = statistics.median(r["read"] for r in rows)
        prompt = statistics.median(r["prompt"] for r in rows)
        print(
            f"{model:<6} {label:<7} {statistics.median(r['ready'] for r in rows):>8.1f} "
            f"{statistics.median(r['seconds'] for r in rows):>12.1f}  {each:<17} {read:>5.0f}/{prompt:.0f} "
            f"{statistics.median(r['posted'] for r in rows):>16.1f} "
            f"{statistics.median(r['stored_to_reply'] for r in rows):>20.1f}"
        )
    print(
        "ready: from the supervisor's start (set-up done) to its ready line; reply: from starting "
        "`captain_demo_chat` (its Python and Django start-up included) to its end; from POST: from its webhook "
        "POST to the reply stored and delivered (polled every 0.3 s); stored->reply: from the customer's message "
        "stored to the reply stored (the product's own timestamps); read again: prompt tokens not cached"
    )


if __name__ == "__main__":
    main()
