"""A scripted OpenAI-compatible Chat Completions server on 127.0.0.1, for tests that go over real HTTP.

It answers `POST /v1/chat/completions` and `GET /v1/models` with real Chat Completions JSON, so the real
`openai` SDK (and anything behind it: our `OpenAIChatModel`, a Celery worker) parses the answers exactly as it
would parse OpenAI's, and it can misbehave on cue: HTTP errors with Retry-After, slow answers, broken JSON,
reset connections.

    script = [tool_call("faq_lookup", {"query": "refund"}), text("Refunds take 5 days.")]
    with FakeLLMServer(script) as server:
        client = make_openai_client(server.base_url, None, timeout=2, max_retries=0)
        ...
        assert server.requests[0]["tools"][0]["function"]["name"] == "faq_lookup"

Where answers come from, in this order:
1. the queue of steps (given to the constructor or `push`ed later), consumed in order, one per request;
2. otherwise `responder(request_json) -> step`, called with the parsed request body;
3. otherwise a 500 whose body says the script is exhausted (and `unexpected` counts it), so a test that makes
   more calls than it scripted fails loudly instead of hanging.

Streaming: a request with `stream: true` gets the same scripted answer as server-sent events (content cut into
`stream_chunk_size` pieces, or a `streamed(...)` step's own chunks; an optional delay between chunks; usage in a
last chunk when `stream_options.include_usage` asks; `break_after`/`error_after` cut the stream midway).

Multi-process tests (the test process runs this server, a separate Celery worker calls it): the script lives
in the server, so the queue works as long as the order of requests is known. When it is not (several workers,
retries, a sweeper), prefer a `responder` that decides from the request itself: which tools are offered
(`offered_tools`), the system prompt (`system_prompt`), the last user message (`last_user_message`), or
whether a tool result is already present (`tool_results`). That stays correct whatever order the calls arrive
in.
"""

from __future__ import annotations

import itertools
import json
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# ---- steps -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TextStep:
    """Answer with an assistant text message."""

    content: str
    prompt_tokens: int | None = None
    """Reported prompt tokens; None derives them from the request size (about 4 characters per token)."""
    completion_tokens: int | None = None
    """Reported completion tokens; None derives them from the content length."""
    finish_reason: str = "stop"
    chunks: tuple[str, ...] | None = None
    """Streamed requests (`stream: true`): the content deltas, in order (they must join to `content`); None
    cuts `content` into pieces of the server's `stream_chunk_size`."""
    chunk_delay: float | None = None
    """Streamed requests: seconds between chunks; None uses the server's `stream_chunk_delay`."""
    break_after: int | None = None
    """Streamed requests: after this many content chunks, drop the connection (a stream cut midway)."""
    error_after: int | None = None
    """Streamed requests: after this many content chunks, send an `{"error": ...}` event and end."""


@dataclass(frozen=True)
class ToolCallSpec:
    """One function call inside a `ToolCallsStep`."""

    name: str
    arguments: dict[str, Any] | str
    """A dict is JSON-encoded; a str is sent verbatim (use it to send invalid JSON arguments)."""
    call_id: str | None = None
    """None numbers the call (call_1, call_2, ...) across the server's lifetime."""


@dataclass(frozen=True)
class ToolCallsStep:
    """Answer with one or more function calls (and optional accompanying text)."""

    calls: tuple[ToolCallSpec, ...]
    content: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass(frozen=True)
class ErrorStep:
    """Answer with an HTTP error status."""

    status: int
    retry_after: float | None = None
    """Sent as a Retry-After header when set."""
    body: dict[str, Any] | str | None = None
    """None sends an OpenAI-style `{"error": {...}}` body."""


@dataclass(frozen=True)
class DelayStep:
    """Wait, then answer with `then` (use it to trip client timeouts)."""

    seconds: float
    then: Step


@dataclass(frozen=True)
class InvalidJsonStep:
    """Answer 200 with `Content-Type: application/json` and a body that is not JSON."""

    body: str = '{"id": "chatcmpl-broken", "choices": [{"message": '


@dataclass(frozen=True)
class RawStep:
    """Answer with this exact JSON body (e.g. a completion without choices)."""

    body: dict[str, Any] | list[Any] | str
    """A str is sent verbatim; anything else JSON-encoded."""
    status: int = 200
    content_type: str = "application/json"


@dataclass(frozen=True)
class ResetStep:
    """Close the connection without answering (a TCP reset after the request was read)."""


Step = TextStep | ToolCallsStep | ErrorStep | DelayStep | InvalidJsonStep | RawStep | ResetStep
Responder = Callable[[dict[str, Any]], "Step | None"]


def text(content: str, *, prompt_tokens: int | None = None, completion_tokens: int | None = None) -> TextStep:
    return TextStep(content, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)


def streamed(
    content: str,
    *,
    chunks: Sequence[str] | None = None,
    delay: float | None = None,
    break_after: int | None = None,
    error_after: int | None = None,
) -> TextStep:
    """A text answer with explicit stream behaviour (a non-streamed request gets the plain completion)."""
    if chunks is not None and "".join(chunks) != content:
        raise ValueError("chunks must join to the content")
    return TextStep(
        content,
        chunks=tuple(chunks) if chunks is not None else None,
        chunk_delay=delay,
        break_after=break_after,
        error_after=error_after,
    )


def tool_call(
    name: str,
    arguments: dict[str, Any] | str | None = None,
    *,
    call_id: str | None = None,
    content: str | None = None,
) -> ToolCallsStep:
    return ToolCallsStep(
        (ToolCallSpec(name, {} if arguments is None else arguments, call_id),), content=content
    )


def tool_calls(
    calls: Sequence[ToolCallSpec | tuple[str, dict[str, Any] | str]], *, content: str | None = None
) -> ToolCallsStep:
    """Several calls in one response.

    `tool_calls([("faq_lookup", {"query": "x"}), ("handoff_to_billing", {})])`
    """
    specs = tuple(c if isinstance(c, ToolCallSpec) else ToolCallSpec(c[0], c[1]) for c in calls)
    return ToolCallsStep(specs, content=content)


def error(
    status: int, *, retry_after: float | None = None, body: dict[str, Any] | str | None = None
) -> ErrorStep:
    return ErrorStep(status, retry_after=retry_after, body=body)


def delay(seconds: float, step: Step) -> DelayStep:
    return DelayStep(seconds, step)


def invalid_json() -> InvalidJsonStep:
    return InvalidJsonStep()


def raw(
    body: dict[str, Any] | list[Any] | str, *, status: int = 200, content_type: str = "application/json"
) -> RawStep:
    return RawStep(body, status=status, content_type=content_type)


def reset() -> ResetStep:
    return ResetStep()


# ---- helpers for responders --------------------------------------------------------------------------------


def offered_tools(request: dict[str, Any]) -> list[str]:
    """Names of the function tools offered in a chat completions request."""
    return [t.get("function", {}).get("name", "") for t in request.get("tools") or []]


def system_prompt(request: dict[str, Any]) -> str:
    """Everything the request tells the model as system: the fixed prompt (first) and the turn's context (a later
    system message), joined as the model reads them."""
    return "\n\n".join(
        m.get("content") or ""
        for m in request.get("messages") or []
        if m.get("role") in ("system", "developer") and isinstance(m.get("content"), str)
    )


def last_user_message(request: dict[str, Any]) -> str:
    for message in reversed(request.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


def tool_results(request: dict[str, Any]) -> list[str]:
    """Contents of the tool result messages already in the request (empty on an agent's first call)."""
    return [m.get("content") or "" for m in request.get("messages") or [] if m.get("role") == "tool"]


# ---- the server --------------------------------------------------------------------------------------------


@dataclass
class _Script:
    steps: deque[Step] = field(default_factory=deque)
    responder: Responder | None = None


class FakeLLMServer:
    """Scripted Chat Completions server on 127.0.0.1 (free port), served from a background thread."""

    def __init__(
        self,
        steps: Iterable[Step] = (),
        *,
        responder: Responder | None = None,
        model: str | None = None,
        stream_chunk_size: int = 4,
        stream_chunk_delay: float = 0.0,
    ) -> None:
        self._script = _Script(deque(steps), responder)
        self.model = model
        self.stream_chunk_size = stream_chunk_size
        """Streamed answers: characters per content chunk unless a step names its chunks."""
        self.stream_chunk_delay = stream_chunk_delay
        """Streamed answers: seconds between chunks unless a step says otherwise."""
        """Model name reported in responses; None echoes the requested model, as real servers do."""
        self.requests: list[dict[str, Any]] = []
        """JSON bodies of every chat completions request, in arrival order."""
        self.authorizations: list[str] = []
        """The Authorization header of every POST, in arrival order (which key reached this server)."""
        self.unexpected = 0
        """Requests that found the script exhausted (answered with a 500)."""
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle

    def start(self) -> FakeLLMServer:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        server.daemon_threads = True  # a test that stops mid-delay must not wait for the sleeping handler
        server.handle_error = _quiet_handle_error  # type: ignore[method-assign]
        self._server = server
        # A short poll interval keeps stop() (and so each test's teardown) fast; the default is 0.5 s.
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-llm-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping in a DelayStep
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("server not started")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """What to pass as the SDK's `base_url` (or OPENAI_BASE_URL)."""
        return f"http://127.0.0.1:{self.port}/v1"

    # ---- script

    def push(self, *steps: Step) -> None:
        """Append steps to the queue."""
        with self._lock:
            self._script.steps.extend(steps)

    def set_responder(self, responder: Responder | None) -> None:
        with self._lock:
            self._script.responder = responder

    @property
    def remaining(self) -> int:
        """Queued steps not consumed yet."""
        with self._lock:
            return len(self._script.steps)

    def _next_step(self, request: dict[str, Any]) -> Step | None:
        with self._lock:
            self.requests.append(request)
            if self._script.steps:
                return self._script.steps.popleft()
            responder = self._script.responder
        # Called outside the lock: a responder may be slow or may push steps itself.
        step = responder(request) if responder is not None else None
        if step is None:
            with self._lock:
                self.unexpected += 1
        return step

    # ---- response bodies

    def _completion(self, step: TextStep | ToolCallsStep, request: dict[str, Any]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": step.content, "refusal": None}
        finish_reason = "stop"
        if isinstance(step, TextStep):
            finish_reason = step.finish_reason
            generated = step.content
        else:
            finish_reason = "tool_calls"
            message["tool_calls"] = [
                {
                    "id": spec.call_id or f"call_{next(self._ids)}",
                    "type": "function",
                    "function": {
                        "name": spec.name,
                        "arguments": spec.arguments
                        if isinstance(spec.arguments, str)
                        else json.dumps(spec.arguments, ensure_ascii=False),
                    },
                }
                for spec in step.calls
            ]
            generated = (step.content or "") + json.dumps(message["tool_calls"])
        prompt_tokens = step.prompt_tokens
        if prompt_tokens is None:
            prompt_tokens = max(1, len(json.dumps(request.get("messages", []), ensure_ascii=False)) // 4)
        completion_tokens = step.completion_tokens
        if completion_tokens is None:
            completion_tokens = max(1, len(generated) // 4)
        return {
            "id": f"chatcmpl-fake-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model or request.get("model") or "fake-model",
            "system_fingerprint": "fake",
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


def _quiet_handle_error(request: Any, client_address: Any) -> None:
    """Clients hanging up (timeouts, resets we caused) are expected here; stay quiet instead of printing
    tracebacks."""


def _make_handler(fake: FakeLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's connection pool expects
        # The headers and the body go out as two writes; with Nagle's algorithm the second waited for the
        # client's delayed ACK, ~40 ms on every call (a real model server sets TCP_NODELAY too).
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                model = fake.model or "fake-model"
                self._send_json(
                    200,
                    {
                        "object": "list",
                        "data": [{"id": model, "object": "model", "created": 0, "owned_by": "fake"}],
                    },
                )
            else:
                self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            with fake._lock:
                fake.authorizations.append(self.headers.get("Authorization", ""))
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                return
            try:
                request = json.loads(body)
            except ValueError:
                self._send_json(
                    400, {"error": {"message": "request body is not JSON", "type": "invalid_request"}}
                )
                return
            step = fake._next_step(request)
            if step is None:
                message = "fake LLM server: script exhausted and no responder answered"
                self._send_json(500, {"error": {"message": message, "type": "script_exhausted"}})
                return
            self._answer(step, request)

        def _answer(self, step: Step, request: dict[str, Any]) -> None:
            while isinstance(step, DelayStep):
                if fake._stopping.wait(step.seconds):
                    return
                step = step.then
            if isinstance(step, TextStep | ToolCallsStep) and request.get("stream"):
                self._stream(step, request)
            elif isinstance(step, TextStep | ToolCallsStep):
                self._send_json(200, fake._completion(step, request))
            elif isinstance(step, ErrorStep):
                headers = (
                    {"Retry-After": _format_seconds(step.retry_after)} if step.retry_after is not None else {}
                )
                body = step.body
                if body is None:
                    body = {
                        "error": {"message": f"fake error {step.status}", "type": "fake_error", "code": None}
                    }
                self._send_json(step.status, body, headers)
            elif isinstance(step, InvalidJsonStep):
                self._send(200, step.body.encode(), "application/json")
            elif isinstance(step, RawStep):
                payload = step.body if isinstance(step.body, str) else json.dumps(step.body)
                self._send(step.status, payload.encode(), step.content_type)
            elif isinstance(step, ResetStep):
                # SO_LINGER 0 makes close() send a TCP RST instead of a clean FIN: the client sees a reset.
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
                self.close_connection = True
            else:
                raise TypeError(f"unknown fake LLM step {step!r}")

        def _stream(self, step: TextStep | ToolCallsStep, request: dict[str, Any]) -> None:
            """Server-sent events as OpenAI streams them: a role chunk, content deltas, tool-call deltas, a
            chunk with the finish reason, a usage chunk when `stream_options.include_usage` asks, `[DONE]`."""
            completion = fake._completion(step, request)
            message = completion["choices"][0]["message"]
            content = step.content or ""
            if isinstance(step, TextStep) and step.chunks is not None:
                pieces = list(step.chunks)
            else:
                size = max(1, fake.stream_chunk_size)
                pieces = [content[i : i + size] for i in range(0, len(content), size)]
            delay = step.chunk_delay if isinstance(step, TextStep) else None
            delay = fake.stream_chunk_delay if delay is None else delay
            break_after = step.break_after if isinstance(step, TextStep) else None
            error_after = step.error_after if isinstance(step, TextStep) else None

            def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
                return {
                    "id": completion["id"],
                    "object": "chat.completion.chunk",
                    "created": completion["created"],
                    "model": completion["model"],
                    "system_fingerprint": "fake",
                    "choices": [
                        {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
                    ],
                }

            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self._event(chunk({"role": "assistant", "content": ""}))
                for index, piece in enumerate(pieces):
                    if index and delay and fake._stopping.wait(delay):
                        return
                    if break_after is not None and index >= break_after:
                        # No terminating chunk: the client sees the body end mid-message.
                        self.wfile.flush()
                        self.connection.shutdown(socket.SHUT_RDWR)
                        self.close_connection = True
                        return
                    if error_after is not None and index >= error_after:
                        self._event({"error": {"message": "fake error mid-stream", "type": "server_error"}})
                        self._end_chunks()
                        return
                    self._event(chunk({"content": piece}))
                for index, call in enumerate(message.get("tool_calls") or []):
                    self._event(chunk({"tool_calls": [{"index": index, **call}]}))
                self._event(chunk({}, completion["choices"][0]["finish_reason"]))
                if (request.get("stream_options") or {}).get("include_usage"):
                    usage_chunk = chunk({})
                    usage_chunk["choices"] = []
                    usage_chunk["usage"] = completion["usage"]
                    self._event(usage_chunk)
                self._write_chunk(b"data: [DONE]\n\n")
                self._end_chunks()
            except OSError:
                self.close_connection = True

        def _event(self, data: dict[str, Any]) -> None:
            self._write_chunk(f"data: {json.dumps(data, ensure_ascii=False)}\n\n".encode())

        def _write_chunk(self, payload: bytes) -> None:
            self.wfile.write(f"{len(payload):X}\r\n".encode() + payload + b"\r\n")
            self.wfile.flush()

        def _end_chunks(self) -> None:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
            payload = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self._send(status, payload, "application/json", headers)

        def _send(
            self, status: int, payload: bytes, content_type: str, headers: dict[str, str] | None = None
        ) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except OSError:
                self.close_connection = True  # the client gave up (e.g. its timeout fired during a delay)

    return Handler


def _format_seconds(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else str(seconds)
