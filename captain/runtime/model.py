"""The model boundary: the only module that talks to the `openai` SDK.

The runner depends on the small `ModelClient` protocol below, never on the SDK, so tests script a fake model
in process and any OpenAI-compatible server (OpenAI, vLLM, Ollama, llama.cpp, the bundled local model) plugs
in through `OpenAIChatModel`. Every failure of a model call, whatever its cause, surfaces as one exception
type, `ModelError`, so the run can end in a typed outcome instead of a stack trace.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import httpx
import openai
from openai.types.chat import ChatCompletion

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


@dataclass
class ModelResponse:
    """One model answer, normalised."""

    content: str | None
    """Assistant text (None when the model only called tools)."""
    tool_calls: list[ToolCall]
    """Function calls, in the order the model emitted them."""
    usage: Usage
    """Tokens reported for this call (zero when the endpoint reports none)."""
    model: str
    """Model name the endpoint says answered (falls back to the requested one)."""
    raw: dict[str, Any] | None = None
    """The response body as JSON-compatible data, for the debug log; None for scripted models."""
    finish_reason: str | None = None
    """`stop`, `tool_calls`, `length`... as reported by the endpoint."""
    response_id: str | None = None
    """Provider's response id, for correlating with provider logs."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Free slot for model implementations (e.g. log-probabilities)."""


class ModelClient(Protocol):
    """What the runner needs from a model: one synchronous Chat Completions call."""

    def complete(
        self,
        *,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        temperature: float,
        tool_choice: str | dict[str, Any] | None = None,
    ) -> ModelResponse:
        """Return the model's answer, or raise `ModelError` (and nothing else) when there is none.

        `messages` are Chat Completions message dicts (system first); `tools` are Chat Completions tool
        definitions (`{"type": "function", "function": {...}}`), possibly empty.
        """
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
        http_client=http_client,
    )
    client.max_retry_wait = max_retry_wait
    return client


class OpenAIChatModel:
    """`ModelClient` over the Chat Completions API of any OpenAI-compatible endpoint."""

    provider_name = "openai"
    """Value of `gen_ai.provider.name` on LLM spans."""

    def __init__(self, client: openai.OpenAI, *, provider_name: str = "openai") -> None:
        self.client = client
        self.provider_name = provider_name

    def complete(
        self,
        *,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        temperature: float,
        tool_choice: str | dict[str, Any] | None = None,
    ) -> ModelResponse:
        kwargs: dict[str, Any] = {"model": model, "messages": messages, "temperature": temperature}
        # Some servers (older vLLM, llama.cpp) reject an empty `tools` array, so omit it when there are none.
        if tools:
            kwargs["tools"] = tools
            if tool_choice is not None:
                kwargs["tool_choice"] = tool_choice
        try:
            completion = self.client.chat.completions.create(**kwargs)
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
        try:
            return _parse_completion(completion, requested_model=model)
        except ModelError:
            raise
        except Exception as exc:
            # The SDK builds its models without validation, so a malformed body can surface as odd attribute
            # types here (e.g. `choices` being an object); that is a bad response, not a bug of ours.
            raise ModelError("bad_response", f"malformed completion: {type(exc).__name__}: {exc}") from exc


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
    usage = Usage(requests=1)
    if completion.usage is not None:
        usage.input_tokens = completion.usage.prompt_tokens or 0
        usage.output_tokens = completion.usage.completion_tokens or 0
    return ModelResponse(
        content=content,
        tool_calls=tool_calls,
        usage=usage,
        model=completion.model or requested_model,
        raw=completion.model_dump(mode="json", exclude_unset=True),
        finish_reason=choice.finish_reason,
        response_id=completion.id,
    )


def _bad(message: str) -> ModelError:
    return ModelError("bad_response", message)


def _short(text: str, limit: int = 500) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
