"""Help-centre answers as customers get them: seconds from the customer's message to the reply delivered.

    python -m bench.help_centre_latency [--set harbour] [--models 0.5b,1.5b] [--questions 12] [--before DIR]

A team that set its help centre up earlier, then customers write. For each model and checkout, one fresh start:
a new database into which the help centre (`bench/knowledge/data/<set>`: its documents, read, chunked and embedded
by the product's own pipeline, and its FAQ pairs) is loaded through the knowledge services, with an API inbox whose
callback is this benchmark's receiver; then the product exactly as `scripts/run` starts it (`scripts/supervisor.py`:
the demo seed, both lanes' workers, beat, the web server, the start-up warm-up) on the bundled model (a new
`captain.local_llm` server behind the recording proxy of `bench/reply_latency.py`), with its defaults: the
debounce, the grounding check, suggestions and the remember step all stay in. Once it says it is ready, the
set's single-message questions are asked one after another, each by a new customer, through the signed webhook
(a real HTTP request); a question's time runs from the webhook's acknowledgement to its reply's arrival at the
callback (what a customer on a channel waits). No polling: the receiver notes the arrival.

`--before DIR` measures another checkout the same way (`git worktree add /tmp/before <commit>`), alternating with
this one, both on this checkout's virtualenv, model server and benchmark code.

Prints per model and checkout: p50 and p95 seconds, the reply's model calls and prompt tokens (the calls whose
prompt holds the question, from the server's own usage figures), and how many questions got an answer, a handoff
or nothing within the timeout.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SECRET = "bench-help-centre-secret"
PYTHON = str(ROOT / ".venv" / "bin" / "python")


def product_env(work: Path, **extra: str) -> dict[str, str]:
    from bench.first_reply import clean_env

    return clean_env(HELPDESK_VAR_DIR=str(work / "var"), PYTHONUNBUFFERED="1", **extra)


def load(root: Path, work: Path, centre: str, callback_port: int) -> str:
    """Migrate a new database in `work` and load the help centre into it with `root`'s code (a child process:
    each start has its own database); returns the API inbox's webhook token."""
    (work / "var").mkdir(parents=True, exist_ok=True)
    env = product_env(work, DJANGO_DEBUG="1", DJANGO_SETTINGS_MODULE="config.settings", PYTHONPATH=str(root))
    subprocess.run([PYTHON, "manage.py", "migrate", "-v", "0"], cwd=root, env=env, check=True)
    child = subprocess.run(
        [PYTHON, str(Path(__file__)), "--load-into", centre, "--callback-port", str(callback_port)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if child.returncode != 0:
        raise RuntimeError(f"loading {centre} failed:\n{child.stdout}{child.stderr}")
    return json.loads(child.stdout.strip().splitlines()[-1])["webhook_token"]


def _load_into(centre_name: str, callback_port: int) -> None:
    """In the child: the help centre through the product's services, as bench.knowledge loads it (documents
    processed here, no FAQ drafting: the team's set-up is over before customers write)."""
    import django

    django.setup()
    from django.test.utils import override_settings

    from bench.knowledge.dataset import load_help_centre as read_centre
    from bench.knowledge.harness import load_help_centre
    from config.celery import app
    from helpdesk.models import Inbox

    centre = read_centre(ROOT / "bench" / "knowledge" / "data" / centre_name)
    app.conf.task_always_eager = True
    from django.conf import settings

    captain = {**settings.CAPTAIN, "FAQ_DRAFTS_MAX_CALLS_PER_DOCUMENT": 0}
    with override_settings(CAPTAIN=captain):
        loaded = load_help_centre(centre)
    inbox = Inbox.objects.get(pk=loaded.inbox_id)
    inbox.secret = SECRET
    inbox.callback_url = f"http://127.0.0.1:{callback_port}/callback"
    inbox.save(update_fields=["secret", "callback_url"])
    print(json.dumps({"webhook_token": inbox.webhook_token}))


def questions(centre_name: str, count: int) -> list[Any]:
    from bench.knowledge.dataset import load_help_centre as read_centre

    centre = read_centre(ROOT / "bench" / "knowledge" / "data" / centre_name)
    return [q for q in centre.questions if not q.previous][:count]


def one_start(root: Path, model: str, centre: str, asked: list[Any], timeout: float) -> dict[str, Any]:
    """A fresh database with the help centre, a fresh model server and product from `root`; each question's
    seconds from the webhook's acknowledgement to its reply at the callback."""
    from bench.first_reply import free_port, supervised
    from bench.reply_latency import RecordingProxy
    from bench.webhook_throughput import Receiver
    from captain.local_llm import start_local_llm

    work = Path(tempfile.mkdtemp(prefix="bench-help-centre-"))
    receiver = Receiver()  # on a free port: the product's outbound policy is told to allow exactly that one
    callback_port = int(receiver.server.server_address[1])
    token = load(root, work, centre, callback_port)
    llm = start_local_llm(port=0, model=model, log_path=work / "llm.log")
    proxy = RecordingProxy(llm.base_url)
    port = free_port()
    env = product_env(
        work,
        PORT=str(port),
        REDIS_PORT=str(free_port()),
        DEMO_CALLBACK_PORT=str(callback_port),
        OPENAI_BASE_URL=proxy.base_url,
        OPENAI_API_KEY="local",
        CAPTAIN_MODEL=llm.model,
        CAPTAIN_BUNDLED_MODEL="1",  # what scripts/run sets when it starts the bundled model itself
    )
    try:
        with supervised(root, env, work / "run.out", timeout):
            url = f"http://127.0.0.1:{port}/webhooks/api/{token}/"
            return {"answers": [_ask(url, receiver, proxy, q, n, timeout) for n, q in enumerate(asked)]}
    finally:
        proxy.server.shutdown()
        receiver.server.shutdown()
        llm.stop()


def _ask(url: str, receiver: Any, proxy: Any, question: Any, n: int, timeout: float) -> dict[str, Any]:
    from helpdesk.channels.signed_post import signed_headers

    contact = f"bench-{n}-{question.id}"
    body = json.dumps(
        {"message_id": contact, "contact": {"id": contact, "name": contact}, "text": question.question}
    ).encode()
    headers = {"Content-Type": "application/json", **signed_headers(SECRET, body)}
    asked_at = time.time()
    with urllib.request.urlopen(
        urllib.request.Request(url, data=body, headers=headers), timeout=30
    ) as answer:
        if not 200 <= answer.status < 300:
            raise RuntimeError(f"webhook answered {answer.status}")
    acked = time.monotonic()
    seconds = float("inf")
    while time.monotonic() - acked < timeout:
        arrivals = [at for who, at in list(receiver.replies) if who == contact]
        if arrivals:
            seconds = arrivals[0] - acked
            break
        time.sleep(0.02)
    calls = [
        e
        for e in list(proxy.log)
        if e["at"] >= asked_at - 0.5 and question.question in str((e["request"] or {}).get("messages"))
    ]
    return {
        "id": question.id,
        "kind": question.kind,
        "seconds": seconds,
        "calls": len(calls),
        "prompt": sum(int((e["usage"] or {}).get("prompt_tokens") or 0) for e in calls),
    }


def _print(results: dict[tuple[str, str], dict[str, Any]], centre: str) -> None:
    from bench.live_common import percentile

    print(
        f"\nHelp centre `{centre}`: seconds from the webhook's acknowledgement to the reply at the callback"
    )
    print(
        f"{'model':<6} {'code':<8} {'asked':>5} {'p50 s':>7} {'p95 s':>7} {'calls':>6} {'prompt':>7}  no reply"
    )
    for (model, label), result in results.items():
        answers = result["answers"]
        done = [a["seconds"] for a in answers if a["seconds"] != float("inf")]
        calls = statistics.mean(a["calls"] for a in answers) if answers else float("nan")
        prompt = statistics.mean(a["prompt"] for a in answers) if answers else float("nan")
        print(
            f"{model:<6} {label:<8} {len(answers):>5} {statistics.median(done) if done else float('nan'):>7.1f} "
            f"{percentile(done, 0.95):>7.1f} {calls:>6.2f} {prompt:>7.0f}  {len(answers) - len(done)}"
        )
    print(
        "calls, prompt: the reply's model calls per question and their prompt tokens (the server's figures)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--set", default="harbour", help="a set of bench/knowledge/data")
    parser.add_argument("--models", default="0.5b")
    parser.add_argument(
        "--questions", type=int, default=12, help="the set's first N single-message questions"
    )
    parser.add_argument("--before", type=Path, help="another checkout, measured the same way")
    parser.add_argument("--timeout", type=float, default=600.0, help="for the start, and per question")
    parser.add_argument("--json", type=Path, help="write every answer's figures here")
    parser.add_argument("--load-into", help=argparse.SUPPRESS)
    parser.add_argument("--callback-port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.load_into:
        _load_into(args.load_into, args.callback_port)
        return
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DJANGO_DEBUG", "1")
    import django

    django.setup()  # for the webhook's signing function only; this process touches no database
    asked = questions(args.set, args.questions)
    roots = [("after", ROOT)] + ([("before", args.before.resolve())] if args.before else [])
    results: dict[tuple[str, str], dict[str, Any]] = {}
    for model in args.models.split(","):
        for label, root in roots:
            results[(model, label)] = one_start(root, model, args.set, asked, args.timeout)
            _print({(model, label): results[(model, label)]}, args.set)
    _print(results, args.set)
    if args.json:
        args.json.write_text(json.dumps({f"{m}/{c}": r for (m, c), r in results.items()}, indent=1))


if __name__ == "__main__":
    main()
