"""`OpenAIChatModel` through the real `openai` SDK over real HTTP, against the scripted fake server on
127.0.0.1.

Every way a model endpoint can fail must come out as `ModelError`, with a `kind` the run can act on.
"""

from __future__ import annotations

import json
import time

import pytest

from captain.runtime import (
    Agent,
    ModelError,
    ModelSettings,
    OpenAIChatModel,
    Reply,
    RunContext,
    Runner,
    Tool,
    Usage,
    make_openai_client,
)
from tests.support.fake_llm_server import (
    FakeLLMServer,
    delay,
    error,
    invalid_json,
    offered_tools,
    raw,
    reset,
    text,
    tool_call,
    tool_calls,
    tool_results,
)

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Where is my order?"}]
FAQ_TOOL = {
    "type": "function",
    "function": {
        "name": "faq_lookup",
        "description": "Search the FAQ.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "additionalProperties": False,
        },
    },
}


@pytest.fixture
def server():
    with FakeLLMServer() as fake:
        yield fake


def model_for(
    server: FakeLLMServer, *, timeout: float = 2.0, max_retries: int = 0, **kwargs
) -> OpenAIChatModel:
    return OpenAIChatModel(make_openai_client(server.base_url, None, timeout, max_retries, **kwargs))


def complete(model: OpenAIChatModel, tools=()):
    return model.complete(
        model="small-model", messages=MESSAGES, tools=list(tools), settings=ModelSettings(temperature=0.0)
    )


def failure(model: OpenAIChatModel) -> ModelError:
    with pytest.raises(ModelError) as caught:
        complete(model)
    return caught.value


# ---- answers -----------------------------------------------------------------------------------------------


def test_text_answer_is_parsed_with_usage_and_model(server):
    server.push(text("Tomorrow.", prompt_tokens=21, completion_tokens=3))
    response = complete(model_for(server))

    assert response.content == "Tomorrow."
    assert response.tool_calls == []
    assert (response.usage.requests, response.usage.input_tokens, response.usage.output_tokens) == (1, 21, 3)
    assert response.model == "small-model"  # the fake server echoes the requested model, as real servers do
    assert response.finish_reason == "stop"
    assert response.raw is not None and response.raw["choices"][0]["message"]["content"] == "Tomorrow."
    [request] = server.requests
    assert request["messages"] == MESSAGES
    assert request["temperature"] == 0.0
    assert "tools" not in request  # an empty tool list is omitted, some servers reject []


def test_tool_calls_are_parsed_in_order_with_raw_argument_text(server):
    server.push(
        tool_calls([("faq_lookup", {"query": "order"}), ("handoff_to_billing", {"reason": "refund"})])
    )
    response = complete(model_for(server), tools=[FAQ_TOOL])

    assert response.content is None
    assert [(c.name, json.loads(c.arguments)) for c in response.tool_calls] == [
        ("faq_lookup", {"query": "order"}),
        ("handoff_to_billing", {"reason": "refund"}),
    ]
    assert all(c.id for c in response.tool_calls)
    assert response.finish_reason == "tool_calls"
    assert server.requests[0]["tools"] == [FAQ_TOOL]


def test_invalid_argument_json_from_the_model_is_passed_through_for_the_runner_to_refuse(server):
    server.push(tool_call("faq_lookup", '{"query": '))
    response = complete(model_for(server), tools=[FAQ_TOOL])

    assert response.tool_calls[0].arguments == '{"query": '


def test_models_endpoint_lists_a_model(server):
    client = make_openai_client(server.base_url, None, 2.0, 0)
    assert [m.id for m in client.models.list()] == ["fake-model"]


def test_client_has_an_explicit_timeout_and_retry_budget():
    client = make_openai_client("http://127.0.0.1:9/v1", None, 7.5, 1)

    assert client.timeout.read == 7.5  # never the SDK's 600 s default
    assert client.timeout.connect == 5.0
    assert client.max_retries == 1


# ---- failures ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (503, "server_error"),
        (500, "server_error"),
        (429, "rate_limited"),
        (400, "bad_request"),
        (401, "auth"),
    ],
)
def test_http_error_statuses_become_model_errors(server, status, kind):
    server.push(error(status))
    exc = failure(model_for(server))

    assert exc.kind == kind
    assert exc.status_code == status
    assert len(server.requests) == 1  # max_retries=0: exactly one attempt


def test_rate_limit_reports_retry_after(server):
    server.push(error(429, retry_after=30))
    exc = failure(model_for(server))

    assert (exc.kind, exc.retry_after) == ("rate_limited", 30.0)


def test_a_retried_503_then_an_answer_succeeds(server):
    server.push(error(503), text("Recovered."))
    response = complete(model_for(server, max_retries=1, max_retry_wait=0.05))

    assert response.content == "Recovered."
    assert len(server.requests) == 2


def test_a_long_retry_after_is_capped_so_retries_fit_the_task_budget(server):
    server.push(error(429, retry_after=30), error(429, retry_after=30))
    started = time.monotonic()
    exc = failure(model_for(server, max_retries=1, max_retry_wait=0.2))

    assert exc.kind == "rate_limited"
    assert len(server.requests) == 2  # it did retry once...
    assert time.monotonic() - started < 5  # ...without sleeping the 30 s the server asked for


def test_a_slow_server_trips_the_timeout(server):
    server.push(delay(3, text("too late")))
    started = time.monotonic()
    exc = failure(model_for(server, timeout=0.3))

    assert exc.kind == "timeout"
    assert time.monotonic() - started < 2


def test_a_reset_connection_is_a_connection_error(server):
    server.push(reset())
    assert failure(model_for(server)).kind == "connection"


def test_a_server_that_is_down_is_a_connection_error():
    with FakeLLMServer() as gone:
        base_url = gone.base_url
    model = OpenAIChatModel(make_openai_client(base_url, None, 1.0, 0))
    assert failure(model).kind == "connection"


@pytest.mark.parametrize(
    ("step", "message"),
    [
        (invalid_json(), "unreadable response body"),
        (
            raw({"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []}),
            "no choices",
        ),
        (raw("<html>gateway</html>", content_type="text/html"), "expected a chat completion"),
        (
            raw({"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": {"0": 1}}),
            "malformed",
        ),
    ],
    ids=["invalid-json", "no-choices", "html-body", "choices-not-a-list"],
)
def test_malformed_bodies_become_bad_response_errors(server, step, message):
    server.push(step)
    exc = failure(model_for(server))

    assert exc.kind == "bad_response"
    assert message in str(exc)


def test_an_exhausted_script_answers_500_so_extra_calls_fail_loudly(server):
    exc = failure(model_for(server))

    assert exc.kind == "server_error"
    assert server.unexpected == 1


# ---- the runner over HTTP ----------------------------------------------------------------------------------


def test_runner_over_http_with_a_responder_that_decides_from_the_request(server):
    """The responder style multi-process tests use: no reliance on the order of calls."""

    def responder(request):
        if "faq_lookup" in offered_tools(request) and not tool_results(request):
            return tool_call("faq_lookup", {"query": "delivery"})
        return text(f"Per our FAQ: {tool_results(request)[-1]}")

    server.set_responder(responder)
    faq = Tool(
        "faq_lookup",
        "Search the FAQ.",
        {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
        lambda ctx, args: f"{args['query']} takes 3 days",
    )
    agent = Agent(key="triage", name="Triage", instructions="Be brief.", model="small-model", tools=[faq])
    result = Runner(model_for(server)).run(
        agents={"triage": agent}, start_key="triage", messages=MESSAGES[1:], context=RunContext(1, 1)
    )

    assert result.outcome == Reply("Per our FAQ: delivery takes 3 days")
    assert result.usage.requests == 2
    assert result.usage.input_tokens > 0
    assert server.requests[1]["messages"][-1]["role"] == "tool"


def test_runner_turns_an_outage_into_a_model_error_outcome(server):
    server.push(error(503, retry_after=1))
    agent = Agent(key="triage", name="Triage", instructions="Be brief.", model="small-model")
    result = Runner(model_for(server)).run(
        agents={"triage": agent}, start_key="triage", messages=MESSAGES[1:], context=RunContext(1, 1)
    )

    assert result.outcome.kind == "error"
    assert result.outcome.error == "model_error"
    assert result.outcome.detail.startswith("server_error (HTTP 503)")


# ---- the router's questions through the same client --------------------------------------------------------


def test_router_settings_are_sent_exactly_and_the_first_tokens_logprobs_come_back(server):
    """One client for agents and routers: a tie-break question is one token at temperature 0 with its
    alternatives' log-probabilities; nothing the settings leave unset is sent."""
    server.push(
        raw(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "small-model",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "B"},
                        "finish_reason": "length",
                        "logprobs": {
                            "content": [
                                {
                                    "token": "B",
                                    "logprob": -0.2,
                                    "bytes": None,
                                    "top_logprobs": [
                                        {"token": "B", "logprob": -0.2, "bytes": None},
                                        {"token": " A", "logprob": -1.8, "bytes": None},
                                    ],
                                }
                            ]
                        },
                    }
                ],
                "usage": {"prompt_tokens": 40, "completion_tokens": 1, "total_tokens": 41},
            }
        )
    )
    response = model_for(server).complete(
        model="small-model",
        messages=MESSAGES,
        settings=ModelSettings(temperature=0, max_tokens=1, top_logprobs=10),
    )

    assert response.content == "B" and response.first_token_logprobs == {"B": -0.2, " A": -1.8}
    assert (response.usage.input_tokens, response.usage.output_tokens) == (40, 1)
    assert response.latency_ms > 0
    [request] = server.requests
    assert request == {
        "model": "small-model",
        "messages": MESSAGES,
        "temperature": 0,
        "max_tokens": 1,
        "logprobs": True,
        "top_logprobs": 10,
    }


def test_an_agent_call_sends_tool_choice_only_with_tools(server):
    server.push(text("a"), tool_call("faq_lookup", {"query": "x"}))
    model = model_for(server)
    model.complete(model="small-model", messages=MESSAGES, settings=ModelSettings(tool_choice="required"))
    model.complete(
        model="small-model",
        messages=MESSAGES,
        tools=[FAQ_TOOL],
        settings=ModelSettings(temperature=0.3, tool_choice="required"),
    )

    plain, with_tools = server.requests
    assert plain == {"model": "small-model", "messages": MESSAGES}
    assert with_tools == {
        "model": "small-model",
        "messages": MESSAGES,
        "temperature": 0.3,
        "tools": [FAQ_TOOL],
        "tool_choice": "required",
    }


def test_prompt_tokens_the_server_took_from_its_cache_are_counted():
    """llama.cpp and OpenAI report the cached prefix as `prompt_tokens_details.cached_tokens`: a stable prompt
    prefix shows up there, and in the run's usage."""
    body = {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi"}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": 900,
            "completion_tokens": 3,
            "total_tokens": 903,
            "prompt_tokens_details": {"cached_tokens": 850},
        },
    }
    with FakeLLMServer([raw(body), text("Hello")]) as server:
        model = model_for(server)
        cached = model.complete(model="m", messages=[{"role": "user", "content": "hi"}])
        plain = model.complete(model="m", messages=[{"role": "user", "content": "hi"}])
    assert (cached.usage.input_tokens, cached.usage.cached_input_tokens) == (900, 850)
    assert plain.usage.cached_input_tokens == 0  # a server that does not say
    total = Usage()
    total.add(cached.usage)
    total.add(plain.usage)
    assert total.cached_input_tokens == 850
