"""The model boundary: the only module that talks to the `openai` SDK.

The runner and the router depend on the small `ModelClient` protocol below, never on the SDK, so tests script
a fake model in process and any OpenAI-compatible server (OpenAI, vLLM, Ollama, llama.cpp, the bundled local
model) plugs in through `OpenAIChatModel`. One call shape serves both: an agent's turn (tools, temperature) and
a router's short question (a few tokens, a JSON-schema `response_format`, the first token's log-probabilities),
chosen by a typed `ModelSettings`. Every failure of a model call, whatever its cause, surfaces as one exception
type, `ModelError`, so the run can end in a typed outcome instead of a stack trace.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, cast

import httpx
import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from .types import Usage

ModelErrorKind = Literal[
    "timeout",
    "rate_limited",
    "server_error",
    "connection",
    "bad_request",
    "auth",
    "bad_response",
    "unexpected",
]


class ModelError(Exception):
    """A model call failed. `kind` says why; the message is internal and never shown to a customer."""

    def __init__(
        self,
        kind: ModelErrorKind,
        message: str,
        *,
        status_code: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: ModelErrorKind = kind
        """timeout, rate_limited, server_error, connection, bad_request, auth, bad_response or unexpected."""
        self.status_code = status_code
        """HTTP status of the last attempt, when there was one."""
        self.retry_after = retry_after
        """Seconds the server asked us to wait (Retry-After), when it said so."""

    def __str__(self) -> str:
        status = f" (HTTP {self.status_code})" if self.status_code is not None else ""
        return f"{self.kind}{status}: {self.args[0]}"


@dataclass(frozen=True)
class ToolCall:
    """One function call requested by the model."""

    id: str
    """Call id chosen by the model endpoint; the tool result must quote it."""
    name: str
    """Function name as the model wrote it (untrusted: may name a tool that does not exist)."""
    arguments: str
    """Raw JSON text of the arguments (untrusted: may be invalid JSON)."""


@dataclass(frozen=True)
class ModelSettings:
    """How to ask: everything of a Chat Completions request besides the model, the messages and the tools.
    A field left at its default is not sent, so each caller's request body carries exactly what it sets."""

    temperature: float | None = None
    """Sampling temperature; None: not sent (the endpoint's default)."""
    max_tokens: int | None = None
    """Cap on generated tokens (a router question needs one to a few dozen); None: not sent."""
    top_logprobs: int = 0
    """> 0: ask for the log-probabilities of this many alternatives per generated token (`logprobs: true`);
    the response carries the first token's (`ModelResponse.first_token_logprobs`)."""
    response_format: Mapping[str, Any] | None = None
    """E.g. a JSON-schema `{"type": "json_schema", ...}` the endpoint enforces by grammar; None: not sent."""
    tool_choice: str | Mapping[str, Any] | None = None
    """`auto`, `required`, `none` or a named function; sent only along with tools."""


DEFAULT_SETTINGS = ModelSettings()


@dataclass
class ModelResponse:
    """One model answer, normalised."""

    content: str | None
    """Assistant text (None when the model only called tools)."""
    tool_calls: list[ToolCall] = field(default_factory=list)
    """Function calls, in the order the model emitted them."""
    usage: Usage = field(default_factory=Usage)
    """Tokens reported for this call (zero when the endpoint reports none)."""
    model: str = ""
    """Model name the endpoint says answered (falls back to the requested one)."""
    raw: dict[str, Any] | None = None
    """The response body as JSON-compatible data, for the debug log; None for scripted models."""
    finish_reason: str | None = None
    """`stop`, `tool_calls`, `length`... as reported by the endpoint."""
    response_id: str | None = None
    """Provider's response id, for correlating with provider logs."""
    first_token_logprobs: dict[str, float] = field(default_factory=dict)
    """{token text: log-probability} of the first generated token's top alternatives (the token itself
    included); empty unless `ModelSettings.top_logprobs` asked for them and the endpoint returned them."""
    latency_ms: float = 0.0
    """Wall time of the call, retries included."""
    first_token_ms: float | None = None
    """Streamed calls: time from the request to the first generated text or tool-call delta; None when the
    call did not stream or nothing was generated."""
    stopped_early: bool = False
    """Streamed calls: the caller stopped reading before the model finished (it had what it needed)."""
    usage_estimated: bool = False
    """The usage is an estimate (a stream stopped early never receives the endpoint's count)."""
    gate_wait_ms: float = 0.0
    """How long the call waited for a slot of the endpoint's gate before it was sent."""


class ModelClient(Protocol):
    """What the runner and the router need from a model: one synchronous Chat Completions call."""

    def complete(
        self,
        *,
        model: str,
        messages: list[dict[str, Any]],
        tools: Sequence[dict[str, Any]] = (),
        settings: ModelSettings = DEFAULT_SETTINGS,
    ) -> ModelResponse:
        """Return the model's answer, or raise `ModelError` (and nothing else) when there is none.

        `messages` are Chat Completions message dicts (system first); `tools` are Chat Completions tool
        definitions (`{"type": "function", "function": {...}}`), possibly empty.
        """
        ...


class StreamingModelClient(ModelClient, Protocol):
    """A model client that can also stream: the generated text reaches `on_text` as it is generated (the text
    tool protocol shows the model's Thought live)."""

    def stream(
        self,
        *,
        model: str,
        messages: list[dict[str, Any]],
        tools: Sequence[dict[str, Any]] = (),
        settings: ModelSettings = DEFAULT_SETTINGS,
        on_text: Callable[[str], bool | None],
    ) -> ModelResponse:
        """Like `complete`, calling `on_text` with each text delta in order; raises `ModelError` (and nothing
        else of its own) when there is no complete answer, a stream that breaks midway included. An exception
        raised by `on_text` propagates unchanged. `on_text` returning False stops reading: the connection
        closes (a server stops generating), and the answer is what arrived (`stopped_early`)."""
        ...


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


class ModelGate(Protocol):
    """Admission to an endpoint's model: a call holds a slot for as long as it talks to the model (customers
    first: captain.model_gate). `slot()` waits for one and yields the milliseconds it waited."""

    def slot(self) -> AbstractContextManager[float]: ...


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
            response = _parse_completion(completion, requested_model=model)
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
            raise _bad(f"expected a stream of chunks, got {type(chunks).__name__}")
        try:
            response = _read_stream(chunks, requested_model=model, started=started, on_text=on_text)
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
            raise _map_openai_error(exc) from exc
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


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


def _next_chunk(iterator: Iterator[ChatCompletionChunk]) -> ChatCompletionChunk | None:
    """The next chunk, None at the end; any failure while reading is a ModelError (a stream cut midway)."""
    try:
        return next(iterator)
    except StopIteration:
        return None
    except openai.OpenAIError as exc:
        raise _map_openai_error(exc) from exc
    except httpx.TimeoutException as exc:
        raise ModelError("timeout", f"stream stalled: {type(exc).__name__}: {exc}") from exc
    except httpx.TransportError as exc:
        raise ModelError("connection", f"stream broken: {type(exc).__name__}: {exc}") from exc
    except ValueError as exc:
        raise ModelError("bad_response", f"unreadable stream chunk: {type(exc).__name__}: {exc}") from exc
    except Exception as exc:
        raise ModelError("unexpected", f"{type(exc).__name__}: {exc}") from exc


@dataclass
class _Stream:
    """What a streamed answer delivered so far."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    usage: Usage = field(default_factory=lambda: Usage(requests=1))
    finish_reason: str | None = None
    model: str = ""
    response_id: str | None = None
    first_token_ms: float | None = None
    first_token: dict[str, float] = field(default_factory=dict)
    content_chunks: int = 0
    stopped_early: bool = False


def _read_stream(
    chunks: openai.Stream[ChatCompletionChunk],
    *,
    requested_model: str,
    started: float,
    on_text: Callable[[str], bool | None],
) -> ModelResponse:
    """Assemble a streamed answer, handing each text delta to `on_text` as it arrives."""
    stream = _Stream()
    iterator = iter(chunks)
    while (chunk := _next_chunk(iterator)) is not None:
        content, has_tool_deltas = _take_chunk(stream, chunk)
        if stream.first_token_ms is None and ((isinstance(content, str) and content) or has_tool_deltas):
            stream.first_token_ms = (time.monotonic() - started) * 1000
        if isinstance(content, str) and content:
            stream.text.append(content)
            stream.content_chunks += 1
            # Outside `_take_chunk`'s try: the caller's own failure is not the model's.
            if on_text(content) is False and stream.finish_reason is None:
                stream.stopped_early = True
                break
    if stream.stopped_early:
        stream.finish_reason = "stop"
        if stream.usage.input_tokens == 0 and stream.usage.output_tokens == 0:
            stream.usage.output_tokens = stream.content_chunks
    elif stream.finish_reason is None:
        raise ModelError("bad_response", "the stream ended before the model finished its answer")
    return _streamed_response(stream, requested_model)


def _cached_tokens(usage: Any) -> int:
    """Prompt tokens the endpoint served from its cache (OpenAI's and llama.cpp's `prompt_tokens_details`)."""
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    return cached if isinstance(cached, int) and cached >= 0 else 0


def _take_chunk(stream: _Stream, chunk: ChatCompletionChunk) -> tuple[str | None, bool]:
    """Fold one chunk into `stream`; return its text delta and whether it carried tool-call deltas."""
    try:
        stream.model = chunk.model or stream.model
        stream.response_id = chunk.id or stream.response_id
        if chunk.usage is not None:
            stream.usage.input_tokens = chunk.usage.prompt_tokens or 0
            stream.usage.output_tokens = chunk.usage.completion_tokens or 0
            stream.usage.cached_input_tokens = _cached_tokens(chunk.usage)
        choice = chunk.choices[0] if chunk.choices else None
        delta = choice.delta if choice is not None else None
        content = delta.content if delta is not None else None
        tool_deltas = (delta.tool_calls if delta is not None else None) or []
        if choice is not None and choice.finish_reason:
            stream.finish_reason = choice.finish_reason
        if choice is not None and not stream.first_token and choice.logprobs and choice.logprobs.content:
            token = choice.logprobs.content[0]
            stream.first_token = {alt.token: alt.logprob for alt in (token.top_logprobs or [])}
            stream.first_token.setdefault(token.token, token.logprob)
        for tool_delta in tool_deltas:
            partial = stream.calls.setdefault(tool_delta.index, _PartialCall())
            partial.id = tool_delta.id or partial.id
            if tool_delta.function is not None:
                partial.name += tool_delta.function.name or ""
                partial.arguments.append(tool_delta.function.arguments or "")
    except Exception as exc:
        # The SDK builds chunks without validation: odd shapes surface as attribute errors here.
        raise ModelError("bad_response", f"malformed chunk: {type(exc).__name__}: {exc}") from exc
    return content, bool(tool_deltas)


def _streamed_response(stream: _Stream, requested_model: str) -> ModelResponse:
    """The finished stream as one response, its `raw` shaped like a Chat Completions body."""
    tool_calls = [
        ToolCall(id=partial.id or f"call_{index}", name=partial.name, arguments="".join(partial.arguments))
        for index, partial in sorted(stream.calls.items())
    ]
    content_text = "".join(stream.text)
    message: dict[str, Any] = {"role": "assistant", "content": content_text or None}
    if tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in tool_calls
        ]
    usage = stream.usage
    raw = {
        "id": stream.response_id,
        "object": "chat.completion",
        "model": stream.model or requested_model,
        "streamed": True,
        "stopped_early": stream.stopped_early,
        "choices": [{"index": 0, "message": message, "finish_reason": stream.finish_reason}],
        "usage": {"prompt_tokens": usage.input_tokens, "completion_tokens": usage.output_tokens},
    }
    return ModelResponse(
        content=content_text if (content_text or not tool_calls) else None,
        tool_calls=tool_calls,
        usage=usage,
        model=stream.model or requested_model,
        raw=raw,
        finish_reason=stream.finish_reason,
        response_id=stream.response_id,
        first_token_logprobs=stream.first_token,
        first_token_ms=stream.first_token_ms,
        stopped_early=stream.stopped_early,
        usage_estimated=stream.stopped_early and stream.usage.input_tokens == 0,
    )


def _map_openai_error(exc: openai.OpenAIError) -> ModelError:
    # Order matters: APITimeoutError is an APIConnectionError, RateLimitError an APIStatusError.
    if isinstance(exc, openai.APITimeoutError):
        return ModelError("timeout", str(exc))
    if isinstance(exc, openai.APIConnectionError):
        return ModelError("connection", str(exc))
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        retry_after = _retry_after_seconds(exc.response.headers.get("retry-after"))
        if status == 429:
            kind: ModelErrorKind = "rate_limited"
        elif status >= 500 or status in (408, 409):
            kind = "server_error"
        elif status in (401, 403):
            kind = "auth"
        else:
            kind = "bad_request"
        return ModelError(kind, _short(str(exc)), status_code=status, retry_after=retry_after)
    # APIResponseValidationError, LengthFinishReasonError and whatever else the SDK may raise.
    return ModelError("bad_response", f"{type(exc).__name__}: {_short(str(exc))}")


def _retry_after_seconds(value: str | None) -> float | None:
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None  # an HTTP date: rare from LLM servers, and the SDK already waited on it
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _parse_completion(completion: object, *, requested_model: str) -> ModelResponse:
    """Normalise a completion, refusing shapes the runner cannot act on."""
    if not isinstance(completion, ChatCompletion):
        # The SDK returns the body as text when the Content-Type is not JSON.
        raise _bad(f"expected a chat completion, got {type(completion).__name__}: {_short(repr(completion))}")
    if not completion.choices:
        raise _bad("response has no choices")
    choice = completion.choices[0]
    message = choice.message
    if message is None:
        raise _bad("first choice has no message")

    tool_calls: list[ToolCall] = []
    for index, call in enumerate(message.tool_calls or []):
        function = getattr(call, "function", None)
        if function is None or not isinstance(getattr(function, "name", None), str):
            raise _bad(f"tool call {index} is not a function call")
        arguments: Any = function.arguments
        if arguments is None:
            arguments = ""
        elif not isinstance(arguments, str):
            # Some servers send the arguments as an object instead of a JSON string.
            arguments = json.dumps(arguments, ensure_ascii=False)
        tool_calls.append(ToolCall(id=call.id or f"call_{index}", name=function.name, arguments=arguments))

    content = message.content if isinstance(message.content, str) else None
    first_token: dict[str, float] = {}
    logprobs = getattr(choice, "logprobs", None)
    if logprobs is not None and logprobs.content:
        token = logprobs.content[0]
        first_token = {alt.token: alt.logprob for alt in (token.top_logprobs or [])}
        first_token.setdefault(token.token, token.logprob)
    usage = Usage(requests=1)
    if completion.usage is not None:
        usage.input_tokens = completion.usage.prompt_tokens or 0
        usage.output_tokens = completion.usage.completion_tokens or 0
        usage.cached_input_tokens = _cached_tokens(completion.usage)
    return ModelResponse(
        content=content,
        tool_calls=tool_calls,
        usage=usage,
        model=completion.model or requested_model,
        raw=completion.model_dump(mode="json", exclude_unset=True),
        finish_reason=choice.finish_reason,
        response_id=completion.id,
        first_token_logprobs=first_token,
    )


def _bad(message: str) -> ModelError:
    return ModelError("bad_response", message)


def _short(text: str, limit: int = 500) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
