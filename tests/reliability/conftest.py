"""Shared parts of the reliability tests: real redis-server and Celery worker processes, the scripted model
server, a callback receiver that can hold a delivery in flight, and helpers to kill a worker by its PID."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from captain.answering.models import CreditLedgerEntry, ReplyJob
from helpdesk.channels.api_channel import signed_headers
from helpdesk.models import Message
from tests.support.database import database_url_for_subprocess
from tests.support.servers import CeleryWorker, start_celery_worker, wait_for

SECRET = "reliability-secret"


class HoldingReceiver:
    """The customer's system behind an API inbox's callback URL. When `hold` is set, the first POST is
    recorded and then held open until `release` is set (so a test can kill the delivering worker while
    the reply is "sent but not acked")."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.hold = False
        self.arrived = threading.Event()
        self.release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.events.append({"json": json.loads(body), "at": time.monotonic()})
                if receiver.hold and not receiver.arrived.is_set():
                    receiver.arrived.set()
                    receiver.release.wait(30)
                try:
                    self.send_response(200)
                    self.end_headers()
                except OSError:
                    pass

            def log_message(self, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/callback"

    def __enter__(self) -> HoldingReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()


@dataclass
class Workers:
    """Celery worker processes this test started; each is stopped by its own PID."""

    base_env: dict[str, str]
    tmp_path: Path
    started: list[CeleryWorker] = field(default_factory=list)

    def start(
        self,
        *,
        concurrency: int = 1,
        pool: str = "prefork",
        queues: str = "helpdesk,captain,captain_background",
        **env: str,
    ):
        worker = start_celery_worker(
            env={**self.base_env, **env},
            log_path=self.tmp_path / f"worker-{len(self.started)}.log",
            concurrency=concurrency,
            pool=pool,
            queues=queues,
        )
        self.started.append(worker)
        return worker

    def logs(self) -> str:
        return "\n".join(w.log()[-4000:] for w in self.started)

    def stop_all(self) -> None:
        for worker in self.started:
            for child in pool_children(worker.proc.pid):
                _kill(child)
            worker.stop()


def pool_children(pid: int) -> list[int]:
    """PIDs of a worker's pool processes (prefork): children of the process we started."""
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (FileNotFoundError, ProcessLookupError):
        return []


def _kill(pid: int) -> None:
    with suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def kill_pool_child(worker: CeleryWorker) -> int:
    """SIGKILL the prefork pool process that runs the task (concurrency 1: the only child)."""
    children = pool_children(worker.proc.pid)
    assert len(children) == 1, children
    _kill(children[0])
    return children[0]


def kill_worker(worker: CeleryWorker) -> None:
    """SIGKILL the whole worker: its main process and its pool processes (a lost machine)."""
    children = pool_children(worker.proc.pid)
    _kill(worker.proc.pid)
    for child in children:
        _kill(child)
    worker.proc.wait(timeout=10)


@pytest.fixture
def workers(redis_url, tmp_path) -> Iterator[Workers]:
    group = Workers(
        base_env={
            "DATABASE_URL": database_url_for_subprocess(),
            "REDIS_URL": redis_url,
            "OPENAI_API_KEY": "test",
            "CAPTAIN_LLM_TIMEOUT": "5",
            "CAPTAIN_LLM_MAX_RETRIES": "0",
            "CAPTAIN_DEBOUNCE_SECONDS": "0",
            "CAPTAIN_LOCK_RETRY_SECONDS": "1",
            "LOG_LEVEL": "INFO",
        },
        tmp_path=tmp_path,
    )
    try:
        yield group
    finally:
        group.stop_all()


@pytest.fixture
def no_debounce(settings):
    """The test process publishes tasks (webhooks); without a debounce they start at once."""
    settings.CAPTAIN = {**settings.CAPTAIN, "DEBOUNCE_SECONDS": 0.0}


def post_message(client, inbox, message_id: str, text: str, *, contact: str = "cust-1"):
    body = json.dumps(
        {"message_id": message_id, "contact": {"id": contact, "name": contact}, "text": text}
    ).encode()
    return client.post(
        f"/webhooks/api/{inbox.webhook_token}/",
        data=body,
        content_type="application/json",
        headers=signed_headers(inbox.secret, body),
    )


def incoming_pending() -> int:
    return Message.objects.filter(
        message_type=Message.Type.INCOMING, reply_job__status=ReplyJob.Status.PENDING
    ).count()


def customer_replies() -> list[Message]:
    """Everything the customer can see from us (public outgoing messages)."""
    return list(Message.objects.filter(message_type=Message.Type.OUTGOING, private=False).order_by("id"))


def double_charges() -> int:
    """Outgoing messages charged more than once (ledger rows per message > 1)."""
    from django.db.models import Count

    return CreditLedgerEntry.objects.values("message_id").annotate(n=Count("id")).filter(n__gt=1).count()


def wait_answered(count: int, *, timeout: float, workers: Workers | None = None) -> None:
    def done() -> bool:
        return (
            Message.objects.filter(message_type=Message.Type.INCOMING)
            .exclude(reply_job__status=ReplyJob.Status.PENDING)
            .count()
            >= count
        )

    logs = (lambda: workers.logs()) if workers else (lambda: "")
    try:
        wait_for(done, timeout=timeout, interval=0.1, what=f"{count} answered messages")
    except TimeoutError as exc:
        raise TimeoutError(f"{exc}\nworker logs:\n{logs()}") from None


@contextmanager
def captain_settings(**values: Any) -> Iterator[None]:
    old = settings.CAPTAIN
    settings.CAPTAIN = {**old, **values}
    try:
        yield
    finally:
        settings.CAPTAIN = old
