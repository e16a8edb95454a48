"""`OpenAIChatModel` posts its chat requests without the SDK's parameter transform (captain.runtime.openai_chat
`_post`): what reaches the server must be what `client.chat.completions.create(**body)` sends: the same
headers and the same JSON body (its top-level keys in our order rather than the SDK's), for a plain call, a call
with tools and router options, and a streamed call. A server on 127.0.0.1 records the raw requests of both."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from captain.runtime import ModelSettings, OpenAIChatModel, make_openai_client

COMPLETION = {
    "id": "c1",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
}
CHUNKS = [
    {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
     "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}, "finish_reason": None}]},
    {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
     "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
     "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}},
]  # fmt: skip


class Recorder:
    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                recorder.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                if json.loads(body).get("stream"):
                    payload = (
                        b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in CHUNKS) + b"data: [DONE]\n\n"
                    )
                    kind = "text/event-stream"
                else:
                    payload, kind = json.dumps(COMPLETION).encode(), "application/json"
                self.send_response(200)
                self.send_header("Content-Type", kind)
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


@pytest.fixture
def recorder():
    server = Recorder()
    yield server
    server.server.shutdown()
    server.server.server_close()


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "faq_lookup",
            "description": "Search the FAQ.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
        },
    }
]
MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are Captain. Prices in €, dates as 2026-11-29."},
    {"role": "user", "content": [{"type": "text", "text": "Hi"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "faq_lookup", "arguments": "{\"query\": \"x\"}"}}]},
    {"role": "tool", "tool_call_id": "t1", "content": "nothing"},
]  # fmt: skip


@pytest.mark.parametrize(
    "body",
    [
        {"model": "m", "messages": [*MESSAGES[:1], {"role": "user", "content": "Hi"}], "temperature": 0.2},
        {
            "model": "m",
            "messages": MESSAGES,
            "temperature": 0.0,
            "max_tokens": 64,
            "tools": TOOLS,
            "tool_choice": "auto",
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "r", "schema": {"type": "object"}},
            },
            "logprobs": True,
            "top_logprobs": 5,
        },
        {"model": "m", "messages": MESSAGES, "stream": True, "stream_options": {"include_usage": True}},
    ],
    ids=["plain", "tools-and-router-options", "streamed"],
)
def test_our_post_sends_what_the_sdk_create_sends(recorder, body):
    client = make_openai_client(recorder.base_url, "sk-test", 5.0, 0)
    sdk = client.chat.completions.create(**body)
    ours = OpenAIChatModel(client)._post(body)
    if body.get("stream"):
        assert [c.model_dump() for c in sdk] == [c.model_dump() for c in ours]  # type: ignore[attr-defined]
    else:
        assert sdk.model_dump() == ours.model_dump()  # type: ignore[attr-defined]
    (sdk_path, sdk_headers, sdk_body), (our_path, our_headers, our_body) = recorder.requests
    assert our_path == sdk_path == "/v1/chat/completions"
    assert our_headers == sdk_headers
    assert our_headers["authorization"] == "Bearer sk-test"
    assert json.loads(our_body) == json.loads(sdk_body)
    assert len(our_body) == len(sdk_body)  # nothing dropped, nothing added, no other encoding


def test_complete_and_stream_go_through_our_post(recorder):
    model = OpenAIChatModel(make_openai_client(recorder.base_url, "sk-test", 5.0, 0))
    assert model.complete(model="m", messages=MESSAGES[:1], settings=ModelSettings()).content == "Hi"
    assert model.stream(model="m", messages=MESSAGES[:1], on_text=lambda _: None).content == "Hi"
    assert [json.loads(b).get("stream", False) for _, _, b in recorder.requests] == [False, True]
