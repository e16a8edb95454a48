"""Record a model's answers once, replay them exactly: check that a change to the code sends the same requests.

A small OpenAI-compatible proxy on 127.0.0.1. In `record` mode it forwards each request to the upstream model and
stores the answer under a hash of the request (method, path and the JSON body with its keys sorted); a request it
has seen before is answered from the store, so the model behaves as a pure function of the request. In `replay`
mode nothing is forwarded: a request that was not recorded is answered with HTTP 400 (the SDK does not retry a
400) and counted as a miss. Run a benchmark through `record` before a refactor and through `replay` after it:
zero misses means every prompt is byte-for-byte the same, and the same answers must give the same decisions.

    python -m bench.model_recorder record --upstream http://127.0.0.1:8081 --store var/model_answers.jsonl
    python -m bench.model_recorder replay --store var/model_answers.jsonl

Each mode prints `MODEL_RECORDER_READY http://127.0.0.1:PORT/v1` once it listens, and on SIGTERM/SIGINT prints
`hits`, `forwarded` and `misses` to stderr.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

READY_PREFIX = "MODEL_RECORDER_READY "


def request_key(method: str, path: str, body: bytes) -> str:
    """The identity of a request: the JSON body's key order and spacing do not count, everything else does."""
    try:
        canonical = json.dumps(json.loads(body or b"null"), sort_keys=True, ensure_ascii=False)
    except ValueError:
        canonical = body.decode("utf-8", "replace")
    return hashlib.sha256(f"{method} {path}\n{canonical}".encode()).hexdigest()


class AnswerStore:
    """Answers by request key, loaded from and appended to a JSON Lines file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.answers: dict[str, tuple[int, str]] = {}
        self.lock = threading.Lock()
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    self.answers.setdefault(row["key"], (row["status"], row["body"]))

    def get(self, key: str) -> tuple[int, str] | None:
        with self.lock:
            return self.answers.get(key)

    def put(self, key: str, status: int, body: str) -> None:
        with self.lock:
            if key in self.answers:
                return
            self.answers[key] = (status, body)
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps({"key": key, "status": status, "body": body}, ensure_ascii=False) + "\n")


class Recorder(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], store: AnswerStore, upstream: str | None) -> None:
        super().__init__(address, Handler)
        self.store = store
        self.upstream = upstream.rstrip("/") if upstream else None
        self.client = httpx.Client(timeout=600.0) if upstream else None
        self.counts = {"hits": 0, "forwarded": 0, "misses": 0}
        self.counts_lock = threading.Lock()

    def count(self, name: str) -> None:
        with self.counts_lock:
            self.counts[name] += 1


class Handler(BaseHTTPRequestHandler):
    server: Recorder

    def log_message(self, format: str, *args: object) -> None:
        pass  # one line per request would drown the benchmark's own output

    def do_GET(self) -> None:
        self._answer(b"")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self._answer(self.rfile.read(length))

    def _answer(self, body: bytes) -> None:
        key = request_key(self.command, self.path, body)
        stored = self.server.store.get(key)
        if stored is not None:
            self.server.count("hits")
            self._send(*stored)
            return
        if self.server.client is None:
            self.server.count("misses")
            error = {"error": {"message": f"request not recorded ({key[:12]})", "type": "not_recorded"}}
            self._send(400, json.dumps(error))
            return
        response = self.server.client.request(
            self.command,
            self.server.upstream + self.path,
            content=body,
            headers={"Content-Type": self.headers.get("Content-Type", "application/json")},
        )
        self.server.count("forwarded")
        if response.status_code < 500:  # an upstream failure is not the model's answer: never store it
            self.server.store.put(key, response.status_code, response.text)
        self._send(response.status_code, response.text)

    def _send(self, status: int, body: str) -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.model_recorder", description=__doc__)
    parser.add_argument("mode", choices=("record", "replay"))
    parser.add_argument("--store", required=True, help="JSON Lines file of recorded answers.")
    parser.add_argument(
        "--upstream", default="", help="The model server (record mode), e.g. http://127.0.0.1:8081"
    )
    parser.add_argument("--port", type=int, default=0, help="Port on 127.0.0.1 (0: a free one).")
    args = parser.parse_args(argv)
    if args.mode == "record" and not args.upstream:
        parser.error("record needs --upstream")
    store = AnswerStore(Path(args.store))
    server = Recorder(("127.0.0.1", args.port), store, args.upstream if args.mode == "record" else None)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    print(f"{READY_PREFIX}http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    stop.wait()
    server.shutdown()
    print(json.dumps(server.counts), file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
