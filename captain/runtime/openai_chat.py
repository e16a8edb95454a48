"""`OpenAIChatModel`: the `ModelClient` of any OpenAI-compatible endpoint, over the `openai` SDK (a client
with a bounded timeout and retry budget, one call or a stream, a slot of the endpoint's model gate around each).
What comes back is read in captain.runtime.openai_reading."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any, cast

import httpx
import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from .model import (
    DEFAULT_SETTINGS,
    ModelError,
    ModelGate,
    ModelResponse,
    ModelSettings,
)
from .openai_reading import bad_response, map_openai_error, parse_completion, read_stream


class _BoundedRetryOpenAI(openai.OpenAI):
    """`openai.OpenAI` whose sleeps between retries are capped.

    The SDK honours a server's Retry-After of up to 120 s per retry. Our retry budget has to fit inside the
    Celery soft time limit (RELIABILITY.md: timeout x (retries + 1) x max turns < soft limit), so a long
    Retry-After must not be able to stall a worker; past the cap, the run gives up and hands the conversation
    to people instead. This overrides a private SDK method (openai pinned in requirements);
    `test_model_openai` fails if the override stops taking effect.
    """

    max_retry_wait: float = 2.0

    def _calculate_retry_timeout(self, *args: Any, **kwargs: Any) -> float:
        return min(super()._calculate_retry_timeout(*args, **kwargs), self.max_retry_wait)


def make_openai_client(
    base_url: str,
    api_key: str | None,
    timeout: float,
    max_retries: int,
    *,
    max_retry_wait: float = 2.0,
    http_client: httpx.Client | None = None,
) -> openai.OpenAI:
    """Build an SDK client with an explicit per-attempt timeout and retry budget.

    The SDK's defaults (600 s timeout, 2 retries, Retry-After honoured up to 120 s) would let one call outlive
    the Celery time limits. Worst case for one `complete` call here, in seconds:

        timeout * (max_retries + 1) + max_retry_wait * max_retries

    Local servers need no key, but the SDK refuses to start without one, hence the placeholder.
    `http_client`: the transport to use (a tenant's own endpoint gets one that enforces the outbound policy).
    """
    client = _BoundedRetryOpenAI(
        base_url=base_url,
        api_key=api_key or "no-key-needed",
        # Connecting to a live server takes milliseconds; a slow connect means it is down.
        timeout=openai.Timeout(timeout, connect=min(timeout, 5.0)),
        max_retries=max_retries,
        # The SDK's annotation names its own httpx fork; it accepts an `httpx.Client` too (it checks for both).
        http_client=cast(Any, http_client),
    )
    client.max_retry_wait = max_retry_wait
    return client


class OpenAIChatModel:
    """`ModelClient` over the Chat Completions API of any OpenAI-compatible endpoint.

    An endpoint that refuses the optional router options (`response_format`, `logprobs`) with a 400 gets the
    call again without them, once, and this client remembers: its later calls go plain.

    `gate`: every call (a streamed one until its last chunk is read) holds a slot of it; None: no admission."""

    provider_name = "openai"
    """Value of `gen_ai.provider.name` on LLM spans."""

    def __init__(
        self, client: openai.OpenAI, *, provider_name: str = "openai", gate: ModelGate | None = None
    ) -> None:
        self.client = client
        self.provider_name = provider_name
        self.gate = gate
        self.plain_only = False
        """True once the endpoint refused `response_format` or `logprobs`: neither is sent any more."""
        self.stream_usage = True
        """False once the endpoint refused `stream_options` on a streamed call: usage is not asked for any
        more (the call then reports zero tokens unless the server sends usage anyway)."""

    @classmethod
    def for_endpoint(
        cls, base_url: str, api_key: str | None = None, *, timeout: float = 30.0, max_retries: int = 1
    ) -> OpenAIChatModel:
        return cls(make_openai_client(base_url, api_key, timeout, max_retries))

    def complete(
        self,
        *,
        model: str,
        messages: list[dict[str, Any]],
        tools: Sequence[dict[str, Any]] = (),
        settings: ModelSettings = DEFAULT_SETTINGS,
    ) -> ModelResponse:
        with self._slot() as waited_ms:
            response = self._complete(model, messages, tools, settings)
        response.gate_wait_ms = waited_ms
        return response

    def _slot(self) -> AbstractContextManager[float]:
        return self.gate.slot() if self.gate is not None else nullcontext(0.0)

    def _complete(
        self,
        model: str,
        messages: list[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
        settings: ModelSettings,
    ) -> ModelResponse:
        body = self._body(model, messages, tools, settings)
        started = time.monotonic()
        try:
            completion = self._create(body)
        except ModelError as exc:
            optional = "response_format" in body or "logprobs" in body
            if not (optional and exc.kind == "bad_request" and exc.status_code == 400):
                raise
            # The endpoint refuses an option: drop both for good and ask once more, plainly.
            self.plain_only = True
            body = self._body(model, messages, tools, settings)
            completion = self._create(body)
        latency_ms = (time.monotonic() - started) * 1000
        try:
            response = parse_completion(completion, requested_model=model)
        except ModelError:
            raise
        except Exception as exc:
            # The SDK builds its models without validation, so a malformed body can surface as odd attribute
            # types here (e.g. `choices` being an object); that is a bad response, not a bug of ours.
            raise ModelError("bad_response", f"malformed completion: {type(exc).__name__}: {exc}") from exc
        response.latency_ms = latency_ms
        return response

    def stream(
        self,
        *,
        model: str,
        messages: list[dict[str, Any]],
        tools: Sequence[dict[str, Any]] = (),
        settings: ModelSettings = DEFAULT_SETTINGS,
        on_text: Callable[[str], bool | None],
    ) -> ModelResponse:
        """`complete`, streamed (`stream: true`): each text delta goes to `on_text` as it arrives. The usage
        comes in a last chunk (`stream_options.include_usage`); an endpoint that refuses that option with a
        400 is asked once more without it (as `complete` drops the router's options), and remembered.

        `on_text` returning False stops reading there: the connection is closed, so the server stops
        generating (a small model going on to invent the tool's result costs seconds per turn on a CPU). The
        usage chunk never comes then: the usage is estimated (prompt characters / 4, one token per chunk)
        and `usage_estimated` says so."""
        with self._slot() as waited_ms:
            response = self._stream(model, messages, tools, settings, on_text)
        response.gate_wait_ms = waited_ms
        return response

    def _stream(
        self,
        model: str,
        messages: list[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
        settings: ModelSettings,
        on_text: Callable[[str], bool | None],
    ) -> ModelResponse:
        started = time.monotonic()
        body = self._stream_body(model, messages, tools, settings)
        try:
            chunks = self._create(body)
        except ModelError as exc:
            optional = any(key in body for key in ("stream_options", "response_format", "logprobs"))
            if not (optional and exc.kind == "bad_request" and exc.status_code == 400):
                raise
            self.stream_usage = False
            self.plain_only = True
            body = self._stream_body(model, messages, tools, settings)
            chunks = self._create(body)
        if not isinstance(chunks, openai.Stream):
            close = getattr(chunks, "close", None)
            if callable(close):
                close()
            raise bad_response(f"expected a stream of chunks, got {type(chunks).__name__}")
        try:
            response = read_stream(chunks, requested_model=model, started=started, on_text=on_text)
            if response.stopped_early and response.usage_estimated:
                response.usage.input_tokens = max(1, len(json.dumps(messages, ensure_ascii=False)) // 4)
        finally:
            chunks.close()
        response.latency_ms = (time.monotonic() - started) * 1000
        return response

    def _stream_body(
        self, model: str, messages: list[dict[str, Any]], tools: Sequence[dict[str, Any]], s: ModelSettings
    ) -> dict[str, Any]:
        body = self._body(model, messages, tools, s)
        body["stream"] = True
        if self.stream_usage:
            body["stream_options"] = {"include_usage": True}
        return body

    def _body(
        self, model: str, messages: list[dict[str, Any]], tools: Sequence[dict[str, Any]], s: ModelSettings
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": model, "messages": messages}
        if s.temperature is not None:
            body["temperature"] = s.temperature
        if s.max_tokens is not None:
            body["max_tokens"] = s.max_tokens
        if s.response_format is not None and not self.plain_only:
            body["response_format"] = dict(s.response_format)
        if s.top_logprobs > 0 and not self.plain_only:
            body["logprobs"] = True
            body["top_logprobs"] = s.top_logprobs
        # Some servers (older vLLM, llama.cpp) reject an empty `tools` array, so omit it when there are none.
        if tools:
            body["tools"] = list(tools)
            if s.tool_choice is not None:
                body["tool_choice"] = s.tool_choice if isinstance(s.tool_choice, str) else dict(s.tool_choice)
        return body

    def _create(self, body: dict[str, Any]) -> object:
        try:
            return self._post(body)
        except openai.OpenAIError as exc:
            raise map_openai_error(exc) from exc
        except ValueError as exc:
            # A 200 whose body is not JSON (json.JSONDecodeError, UnicodeDecodeError) escapes the SDK
            # unwrapped.
            raise ModelError(
                "bad_response", f"unreadable response body: {type(exc).__name__}: {exc}"
            ) from exc
        except Exception as exc:
            # Anything else from inside the SDK or its HTTP stack (e.g. a transport error a future SDK no
            # longer wraps) is still a model outage to the run: it must end in a typed outcome, not a crashed
            # task.
            raise ModelError("unexpected", f"{type(exc).__name__}: {exc}") from exc

    def _post(self, body: dict[str, Any]) -> object:
        """What `client.chat.completions.create(**body)` sends and returns, without its first step: `create`
        walks every message and tool schema through the SDK's typed-dict transform (key aliases, date and file
        formats), which the chat request parameters do not use, so on our plain JSON body it returns what it
        was given. Measured: a call with five tools costs 0.83 ms of CPU instead of 1.46 ms, and the walk alone
        takes 2.2 ms for six tools and thirteen messages. The request is the same (headers, JSON body):
        `test_model_request_bytes` compares the two, so an SDK upgrade that changes what `create` sends fails
        there. Another client (a test double) gets `create` itself."""
        if not isinstance(self.client, openai.OpenAI):
            return self.client.chat.completions.create(**body)
        return self.client.post(
            "/chat/completions",
            body=body,
            options={"security": {"bearer_auth": True}},  # as `create` asks: the API key as a bearer token
            cast_to=ChatCompletion,
            stream=bool(body.get("stream")),
            stream_cls=openai.Stream[ChatCompletionChunk],
        )
