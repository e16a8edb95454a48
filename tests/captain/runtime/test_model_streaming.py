"""`OpenAIChatModel.stream` through the real `openai` SDK over real HTTP (server-sent events from the scripted fake
server on 127.0.0.1): text assembled, deltas handed out as they arrive, usage, and every failure a ModelError."""

from __future__ import annotations

import time

import pytest

from captain.runtime import ModelError, ModelSettings, OpenAIChatModel, make_openai_client
from tests.support.fake_llm_server import FakeLLMServer, error, raw, streamed, text, tool_call

MESSAGES = [{"role": "user", "content": "Where is my order?"}]


def model_for(server: FakeLLMServer, *, timeout: float = 5.0) -> OpenAIChatModel:
    return OpenAIChatModel(make_openai_client(server.base_url, None, timeout=timeout, max_retries=0))


def test_text_is_assembled_and_deltas_arrive_in_order_while_streaming():
    chunks = ["Your ", "order ", "ships ", "tomorrow."]
    with FakeLLMServer([streamed("".join(chunks), chunks=chunks, delay=0.08)]) as server:
        arrivals: list[tuple[str, float]] = []
        started = time.monotonic()
        response = model_for(server).stream(
            model="small",
            messages=MESSAGES,
            on_text=lambda delta: arrivals.append((delta, time.monotonic() - started)),
        )
        request = server.requests[0]
    assert request["stream"] is True
    assert request["stream_options"] == {"include_usage": True}
    assert [delta for delta, _ in arrivals] == chunks
    # Live: the first delta came long before the last one (3 delays of 80 ms between them).
    assert arrivals[-1][1] - arrivals[0][1] > 0.2
    assert response.first_token_ms is not None and response.first_token_ms < arrivals[-1][1] * 1000
    assert response.latency_ms >= response.first_token_ms
    assert response.content == "Your order ships tomorrow."
    assert response.finish_reason == "stop"
    assert response.model == "small"
    assert response.tool_calls == []
    assert response.usage.requests == 1
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0
    assert response.raw is not None and response.raw["choices"][0]["message"]["content"] == response.content


def test_usage_numbers_come_from_the_last_chunk():
    with FakeLLMServer([text("hello there", prompt_tokens=123, completion_tokens=7)]) as server:
        response = model_for(server).stream(model="m", messages=MESSAGES, on_text=lambda _: None)
    assert (response.usage.input_tokens, response.usage.output_tokens) == (123, 7)


def test_streamed_native_tool_calls_are_assembled():
    with FakeLLMServer(
        [tool_call("faq_lookup", {"query": "refund"}, call_id="c1", content="Let me check.")]
    ) as server:
        seen: list[str] = []
        response = model_for(server).stream(
            model="m",
            messages=MESSAGES,
            tools=[{"type": "function", "function": {"name": "faq_lookup", "parameters": {}}}],
            settings=ModelSettings(tool_choice="auto", temperature=0),
            on_text=seen.append,
        )
        request = server.requests[0]
    assert request["tool_choice"] == "auto" and request["temperature"] == 0
    assert "".join(seen) == "Let me check."
    assert response.finish_reason == "tool_calls"
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("c1", "faq_lookup", '{"query": "refund"}')
    ]


@pytest.mark.parametrize(
    ("step", "kind", "status"),
    [
        (error(500), "server_error", 500),
        (error(429, retry_after=1), "rate_limited", 429),
        (error(401), "auth", 401),
        (error(400), "bad_request", 400),
    ],
)
def test_http_errors_before_the_stream_are_mapped(step, kind, status):
    with FakeLLMServer([step]) as server:
        model = model_for(server)
        model.stream_usage = False  # a 400 would otherwise be retried without stream_options
        with pytest.raises(ModelError) as caught:
            model.stream(model="m", messages=MESSAGES, on_text=lambda _: None)
    assert caught.value.kind == kind and caught.value.status_code == status


def test_a_stream_cut_midway_is_a_model_error_after_the_deltas_that_arrived():
    with FakeLLMServer([streamed("abcdefghijkl", chunks=["abcd", "efgh", "ijkl"], break_after=2)]) as server:
        seen: list[str] = []
        with pytest.raises(ModelError) as caught:
            model_for(server).stream(model="m", messages=MESSAGES, on_text=seen.append)
    assert caught.value.kind == "connection"
    assert seen == ["abcd", "efgh"]


def test_an_error_event_midway_is_a_model_error():
    with (
        FakeLLMServer([streamed("abcdefgh", chunks=["abcd", "efgh"], error_after=1)]) as server,
        pytest.raises(ModelError) as caught,
    ):
        model_for(server).stream(model="m", messages=MESSAGES, on_text=lambda _: None)
    assert caught.value.kind == "bad_response"
    assert "mid-stream" in str(caught.value)


def test_a_stalled_stream_times_out():
    with FakeLLMServer([streamed("abcdefgh", chunks=["abcd", "efgh"], delay=2.0)]) as server:
        started = time.monotonic()
        with pytest.raises(ModelError) as caught:
            model_for(server, timeout=0.4).stream(model="m", messages=MESSAGES, on_text=lambda _: None)
    assert caught.value.kind == "timeout"
    assert time.monotonic() - started < 1.8


def test_a_non_stream_answer_is_a_bad_response():
    # A server that ignores `stream: true` and answers with one JSON body: the SDK yields no usable chunks.
    with (
        FakeLLMServer([raw({"id": "x", "object": "chat.completion", "choices": []})]) as server,
        pytest.raises(ModelError) as caught,
    ):
        model_for(server).stream(model="m", messages=MESSAGES, on_text=lambda _: None)
    assert caught.value.kind == "bad_response"


def test_the_callers_own_failure_is_not_a_model_error():
    with FakeLLMServer([text("hello")]) as server:

        def on_text(_: str) -> None:
            raise KeyError("broadcast failed")

        with pytest.raises(KeyError):
            model_for(server).stream(model="m", messages=MESSAGES, on_text=on_text)


def test_an_endpoint_refusing_stream_options_is_asked_again_without_and_remembered():
    def responder(request):
        if "stream_options" in request:
            return error(400, body={"error": {"message": "Unrecognized request argument: stream_options"}})
        return text("plain stream")

    with FakeLLMServer(responder=responder) as server:
        model = model_for(server)
        seen: list[str] = []
        first = model.stream(model="m", messages=MESSAGES, on_text=seen.append)
        second = model.stream(model="m", messages=MESSAGES, on_text=seen.append)
        requests = list(server.requests)
    assert first.content == second.content == "plain stream"
    assert "".join(seen) == "plain streamplain stream"
    assert ["stream_options" in r for r in requests] == [True, False, False]
    assert first.usage.input_tokens == 0, "no usage asked for: none reported"


def test_complete_is_unchanged_by_streaming_support():
    with FakeLLMServer([text("not streamed")]) as server:
        response = model_for(server).complete(model="m", messages=MESSAGES)
        request = server.requests[0]
    assert "stream" not in request and "stream_options" not in request
    assert response.content == "not streamed" and response.first_token_ms is None


def test_on_text_returning_false_stops_reading_and_estimates_the_usage():
    chunks = ["one ", "two ", "three ", "four"]
    with FakeLLMServer([streamed("".join(chunks), chunks=chunks, delay=0.3)]) as server:
        seen: list[str] = []

        def on_text(delta: str) -> bool:
            seen.append(delta)
            return len(seen) < 2

        started = time.monotonic()
        response = model_for(server).stream(model="m", messages=MESSAGES, on_text=on_text)
        elapsed = time.monotonic() - started
    assert seen == ["one ", "two "]
    assert elapsed < 0.6, "did not wait for the rest of the stream"
    assert response.content == "one two " and response.stopped_early and response.finish_reason == "stop"
    assert response.usage_estimated
    assert response.usage.output_tokens == 2 and response.usage.input_tokens > 0
