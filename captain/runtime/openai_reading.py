"""Reading what an OpenAI-compatible endpoint sent back: a completion, a stream of chunks, or an SDK error, as
one `ModelResponse` or one `ModelError` (whatever the failure: the run ends in a typed outcome, never a stack
trace)."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from .model import (
    ModelError,
    ModelErrorKind,
    ModelResponse,
    ToolCall,
)
from .types import Usage


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
        raise map_openai_error(exc) from exc
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


def read_stream(
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


def map_openai_error(exc: openai.OpenAIError) -> ModelError:
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


def parse_completion(completion: object, *, requested_model: str) -> ModelResponse:
    """Normalise a completion, refusing shapes the runner cannot act on."""
    if not isinstance(completion, ChatCompletion):
        # The SDK returns the body as text when the Content-Type is not JSON.
        raise bad_response(
            f"expected a chat completion, got {type(completion).__name__}: {_short(repr(completion))}"
        )
    if not completion.choices:
        raise bad_response("response has no choices")
    choice = completion.choices[0]
    message = choice.message
    if message is None:
        raise bad_response("first choice has no message")

    tool_calls: list[ToolCall] = []
    for index, call in enumerate(message.tool_calls or []):
        function = getattr(call, "function", None)
        if function is None or not isinstance(getattr(function, "name", None), str):
            raise bad_response(f"tool call {index} is not a function call")
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


def bad_response(message: str) -> ModelError:
    return ModelError("bad_response", message)


def _short(text: str, limit: int = 500) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
